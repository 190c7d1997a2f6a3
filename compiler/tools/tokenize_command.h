// `vkc tokenize --tokenizer FILE TEXT`: the ids a tokenizer gives a text (no BOS/EOS added), the
// check users make when a prompt behaves oddly.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace vkc::tools {

struct TokenizeArgs {
  std::string tokenizer, text;
  bool json = false, decode = false;
};

CLI::App* add_tokenize_command(CLI::App& app, TokenizeArgs& args);
int run_tokenize_command(const TokenizeArgs& args);

}  // namespace vkc::tools
