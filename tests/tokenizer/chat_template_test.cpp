// Chat templates against jinja2: tests/tokenizer/chat_templates.json holds templates of the forms
// models ship (Llama-2/3, ChatML, Gemma, Phi-3, Mistral, a namespace() one) rendered by jinja2 as
// transformers configures it (make_chat_templates.py); vkc's renderer must give the same strings,
// and the same raise_exception() errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "vkc/tokenizer/chat_template.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer {
namespace {

TEST(ChatTemplate, RendersAsJinja2) {
  std::ifstream in(std::filesystem::path(VKC_SOURCE_DIR) / "tests/tokenizer/chat_templates.json");
  const nlohmann::json all = nlohmann::json::parse(in);
  ASSERT_GE(all.at("cases").size(), 40u);
  for (const auto& c : all.at("cases")) {
    std::vector<ChatMessage> messages;
    for (const auto& m : c.at("messages")) messages.push_back({m.at("role"), m.at("content")});
    const std::string name = c.at("name");
    if (c.at("error").is_string()) {
      try {
        apply_chat_template(c.at("template"), messages, c.at("add_generation_prompt"), c.at("bos_token"), c.at("eos_token"));
        ADD_FAILURE() << name << ": no error";
      } catch (const TokenizerError& e) {
        EXPECT_EQ(std::string(e.what()), "chat template: " + c.at("error").get<std::string>()) << name;
      }
      continue;
    }
    EXPECT_EQ(apply_chat_template(c.at("template"), messages, c.at("add_generation_prompt"), c.at("bos_token"),
                                  c.at("eos_token")),
              c.at("expected").get<std::string>())
        << name;
  }
}

TEST(ChatTemplate, UnsupportedFormsAreOneErrorNamingThem) {
  auto error = [](const std::string& t) {
    try {
      apply_chat_template(t, {{"user", "x"}}, true);
    } catch (const TokenizerError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("{% macro f() %}{% endmacro %}"), "chat template: '{% macro %}' is not supported");
  EXPECT_EQ(error("{{ messages | map(attribute='role') }}"), "chat template: filter 'map' is not supported");
  EXPECT_EQ(error("{% if true %}x"), "chat template: missing '{% endif %}'");
  EXPECT_EQ(error("{{ 'a' "), "chat template: unclosed '{{' at offset 0");
}

}  // namespace
}  // namespace vkc::tokenizer
