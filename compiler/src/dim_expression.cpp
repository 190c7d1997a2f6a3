#include "dim_expression.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

namespace vkc::compiler::detail {
namespace {

bool is_function(const std::string& name) {
  for (const char* f : {"floor", "ceiling", "FloorToInt", "CeilToInt", "Max", "Min", "max", "min"})
    if (name == f) return true;
  return false;
}

// A recursive-descent parser over the text; every step returns nullopt on anything unexpected.
class Parser {
 public:
  Parser(const std::string& text, const std::map<std::string, int64_t>& symbols) : s_(text), symbols_(symbols) {}

  std::optional<int64_t> parse() {
    auto v = expr(0);
    skip();
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;  // nesting bound: a malformed file cannot exhaust the stack

  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(const char* tok) {
    skip();
    const std::string t(tok);
    if (s_.compare(pos_, t.size(), t) != 0) return false;
    pos_ += t.size();
    return true;
  }
  static std::optional<int64_t> checked(__int128 v) {
    if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }

  std::optional<int64_t> expr(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    auto v = term(depth);
    while (v) {
      if (eat("+")) {
        auto r = term(depth);
        v = r ? checked(static_cast<__int128>(*v) + *r) : std::nullopt;
      } else if (eat("-")) {
        auto r = term(depth);
        v = r ? checked(static_cast<__int128>(*v) - *r) : std::nullopt;
      } else {
        break;
      }
    }
    return v;
  }

  std::optional<int64_t> term(int depth) {
    auto v = factor(depth);
    while (v) {
      if (eat("*")) {
        auto r = factor(depth);
        v = r ? checked(static_cast<__int128>(*v) * *r) : std::nullopt;
      } else if (eat("//")) {
        auto r = factor(depth);
        if (!r || *r == 0 || (*v == std::numeric_limits<int64_t>::min() && *r == -1)) return std::nullopt;
        v = floor_div(*v, *r);
      } else if (eat("/")) {
        auto r = factor(depth);
        if (!r || *r == 0 || (*v == std::numeric_limits<int64_t>::min() && *r == -1) || *v % *r != 0)
          return std::nullopt;
        v = *v / *r;
      } else {
        break;
      }
    }
    return v;
  }

  // floor(a / b) and ceiling(a / b) as sympy writes them: the argument's quotient rounded.
  std::optional<int64_t> rounded_quotient(int depth, bool up) {
    auto a = factor(depth);
    if (!a) return std::nullopt;
    int64_t v = *a;
    while (eat("/")) {
      auto b = factor(depth);
      if (!b || *b == 0 || (v == std::numeric_limits<int64_t>::min() && *b == -1)) return std::nullopt;
      const int64_t q = floor_div(v, *b);
      v = up && q * *b != v ? q + 1 : q;
    }
    return v;
  }

  std::optional<int64_t> factor(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    skip();
    if (pos_ >= s_.size()) return std::nullopt;
    if (eat("-")) {
      auto v = factor(depth + 1);
      return v ? checked(-static_cast<__int128>(*v)) : std::nullopt;
    }
    if (eat("(")) {
      auto v = expr(depth + 1);
      return v && eat(")") ? v : std::nullopt;
    }
    const char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      __int128 v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        v = v * 10 + (s_[pos_++] - '0');
        if (v > std::numeric_limits<int64_t>::max()) return std::nullopt;
      }
      return static_cast<int64_t>(v);
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') return std::nullopt;
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    const std::string name = s_.substr(start, pos_ - start);
    skip();
    if (pos_ < s_.size() && s_[pos_] == '(') return call(name, depth);
    auto it = symbols_.find(name);
    if (it == symbols_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<int64_t> call(const std::string& name, int depth) {
    eat("(");
    if (name == "floor" || name == "ceiling" || name == "FloorToInt" || name == "CeilToInt") {
      auto v = rounded_quotient(depth + 1, name == "ceiling" || name == "CeilToInt");
      return v && eat(")") ? v : std::nullopt;
    }
    if (!is_function(name)) return std::nullopt;
    std::vector<int64_t> args;
    do {
      auto v = expr(depth + 1);
      if (!v) return std::nullopt;
      args.push_back(*v);
    } while (eat(","));
    if (!eat(")") || args.size() < 2) return std::nullopt;
    int64_t r = args[0];
    for (int64_t a : args) r = (name == "Max" || name == "max") ? std::max(r, a) : std::min(r, a);
    return r;
  }

  const std::string& s_;
  const std::map<std::string, int64_t>& symbols_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<int64_t> eval_dim_expression(const std::string& text, const std::map<std::string, int64_t>& symbols) {
  if (text.size() > 4096) return std::nullopt;
  return Parser(text, symbols).parse();
}

std::set<std::string> dim_expression_symbols(const std::string& text) {
  std::set<std::string> names;
  auto ident = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (!first && (std::isdigit(static_cast<unsigned char>(c)) || c == '.'));
  };
  for (size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {  // a number, including any letters glued to it
      while (i < text.size() && ident(text[i], false)) ++i;
      continue;
    }
    if (!ident(text[i], true)) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < text.size() && ident(text[i], false)) ++i;
    std::string name = text.substr(start, i - start);
    if (!is_function(name)) names.insert(std::move(name));
  }
  return names;
}

}  // namespace vkc::compiler::detail
