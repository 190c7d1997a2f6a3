#include "tokenize_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "vkc/compiler/option_parsing.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tools {

CLI::App* add_tokenize_command(CLI::App& app, TokenizeArgs& a) {
  CLI::App* t = app.add_subcommand("tokenize", "print the token ids of a text (no BOS/EOS added), or with --decode "
                                               "the text of ids");
  t->add_option("--tokenizer", a.tokenizer, "tokenizer.json, a SentencePiece tokenizer.model, or a folder holding one")
      ->required();
  t->add_option("TEXT", a.text, "the text (with --decode: ids, space- or comma-separated)")->required();
  t->add_flag("--decode", a.decode, "TEXT is ids: print their text");
  t->add_flag("--json", a.json, "print JSON");
  return t;
}

int run_tokenize_command(const TokenizeArgs& a) {
  std::unique_ptr<tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(a.tokenizer);
  if (a.decode) {
    std::vector<int64_t> ids;
    std::string item;
    for (size_t i = 0; i <= a.text.size(); ++i) {
      const char c = i < a.text.size() ? a.text[i] : ' ';
      if (c == ' ' || c == ',') {
        if (item.empty()) continue;
        if (!std::all_of(item.begin(), item.end(), ::isdigit) || item.size() > 12 || std::stoll(item) >= tok->vocab_size())
          throw compiler::OptionError(fmt::format("--decode: '{}' is not an id of this tokenizer (0..{})", item,
                                                  tok->vocab_size() - 1));
        ids.push_back(std::stoll(item));
        item.clear();
      } else {
        item += c;
      }
    }
    const std::string text = tok->decode(ids);
    if (a.json) fmt::print("{}\n", nlohmann::ordered_json{{"ids", ids}, {"text", text}}.dump());
    else fmt::print("{}\n", text);
    return 0;
  }
  const std::vector<int64_t> ids = tok->encode(a.text);
  if (a.json)
    fmt::print("{}\n", nlohmann::ordered_json{{"tokenizer", tok->kind()}, {"ids", ids}, {"count", ids.size()}}.dump());
  else
    fmt::print("ids: {}\n", fmt::join(ids, " "));
  return 0;
}

}  // namespace vkc::tools
