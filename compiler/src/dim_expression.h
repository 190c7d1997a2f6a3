// Symbolic dims that exporters write as arithmetic over other dims: the legacy exporter takes
// dynamic_axes names as given ("past_sequence_length + sequence_length", as optimum names an
// attention mask's length), and the dynamo exporter writes torch's sympy expressions ("s0 + s1",
// "2*s0", "(s0//2)", "Max(1, s0)").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace vkc::compiler::detail {

/// The value of `text` with each symbol read from `symbols`: integers, symbols
/// ([A-Za-z_][A-Za-z0-9_.]*), + - * // (floor division) / (exact division only), parentheses,
/// unary minus, Max/Min of two or more and floor/ceiling of one. Empty when the text is not such an
/// expression, names a symbol `symbols` lacks, divides by zero or inexactly with /, or overflows.
std::optional<int64_t> eval_dim_expression(const std::string& text, const std::map<std::string, int64_t>& symbols);

/// The symbols `text` names (every identifier but the functions above): "past + seq" names past
/// and seq, so --dim past=... fixes something in a model whose only such dim is that sum.
std::set<std::string> dim_expression_symbols(const std::string& text);

}  // namespace vkc::compiler::detail
