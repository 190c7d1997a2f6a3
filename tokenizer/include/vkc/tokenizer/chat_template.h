// Chat templates (tokenizer_config.json's "chat_template"): the Jinja subset the models' templates
// use, rendered as transformers renders them (trim_blocks and lstrip_blocks on). Supported:
// text, {{ expression }}, {% if / elif / else / endif %}, {% for x in list [if cond] %} ... {% endfor %}
// with loop.index/index0/first/last/length, {% set name = ... %} and {% set ns.attr = ... %} with
// namespace(), whitespace control ({%- -%} {{- -}}), comments; expressions with literals, lists,
// dicts, names, a.b, a['b'], a[i], a[i:j], + - * % ~, comparisons, in / not in, and / or / not,
// `x if c else y`, tests (is [not] defined / none / string / number / mapping / sequence), filters
// (trim, length, upper, lower, tojson, string, first, last), methods (strip, lstrip, rstrip,
// startswith, endswith, upper, lower, split, items, get) and raise_exception(), range(). Anything
// else is one TokenizerError naming it (docs/llm.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vkc::tokenizer {

struct ChatMessage {
  std::string role, content;
};

/// The template rendered with `messages`, add_generation_prompt, bos_token and eos_token.
std::string apply_chat_template(const std::string& tmpl, const std::vector<ChatMessage>& messages,
                                bool add_generation_prompt, const std::string& bos_token = "",
                                const std::string& eos_token = "");

}  // namespace vkc::tokenizer
