// The Jinja subset of chat_template.h: a template is cut into text, {{ }} and {% %} segments
// (whitespace control, trim_blocks, lstrip_blocks), parsed into a tree of statements over
// expressions, and rendered against the messages.
#include "vkc/tokenizer/chat_template.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <climits>
#include <cstdint>
#include <map>
#include <memory>

#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer {
namespace {

[[noreturn]] void fail(const std::string& what) { throw TokenizerError("chat template: " + what); }

// ---- values
struct Value;
using List = std::vector<Value>;
using Dict = std::map<std::string, Value>;
struct Value {
  enum Kind { Undefined, None, Bool, Int, Str, ListK, DictK } kind = Undefined;
  bool b = false;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;
  static Value of(bool v) { Value x; x.kind = Bool, x.b = v; return x; }
  static Value of(int64_t v) { Value x; x.kind = Int, x.i = v; return x; }
  static Value of(std::string v) { Value x; x.kind = Str, x.s = std::move(v); return x; }
  static Value of(List v) { Value x; x.kind = ListK, x.list = std::make_shared<List>(std::move(v)); return x; }
  static Value of(Dict v) { Value x; x.kind = DictK, x.dict = std::make_shared<Dict>(std::move(v)); return x; }
  static Value none() { Value x; x.kind = None; return x; }
};

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Bool: return v.b;
    case Value::Int: return v.i != 0;
    case Value::Str: return !v.s.empty();
    case Value::ListK: return !v.list->empty();
    case Value::DictK: return !v.dict->empty();
    default: return false;
  }
}

std::string str(const Value& v) {
  switch (v.kind) {
    case Value::None: return "None";
    case Value::Bool: return v.b ? "True" : "False";
    case Value::Int: return std::to_string(v.i);
    case Value::Str: return v.s;
    case Value::ListK: {
      std::string s = "[";
      for (size_t k = 0; k < v.list->size(); ++k) s += (k ? ", " : "") + ((*v.list)[k].kind == Value::Str ? "'" + (*v.list)[k].s + "'" : str((*v.list)[k]));
      return s + "]";
    }
    case Value::DictK: return "{...}";
    default: return "";
  }
}

bool equal(const Value& a, const Value& b) {
  if (a.kind != b.kind) return (a.kind == Value::Int && b.kind == Value::Bool) || (a.kind == Value::Bool && b.kind == Value::Int) ? truthy(a) == truthy(b) : false;
  switch (a.kind) {
    case Value::Bool: return a.b == b.b;
    case Value::Int: return a.i == b.i;
    case Value::Str: return a.s == b.s;
    case Value::ListK: {
      if (a.list->size() != b.list->size()) return false;
      for (size_t k = 0; k < a.list->size(); ++k)
        if (!equal((*a.list)[k], (*b.list)[k])) return false;
      return true;
    }
    case Value::DictK: return a.dict == b.dict;
    default: return true;
  }
}

nlohmann::json to_json(const Value& v) {
  switch (v.kind) {
    case Value::Bool: return v.b;
    case Value::Int: return v.i;
    case Value::Str: return v.s;
    case Value::ListK: {
      nlohmann::json j = nlohmann::json::array();
      for (const Value& x : *v.list) j.push_back(to_json(x));
      return j;
    }
    case Value::DictK: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& [k, x] : *v.dict) j[k] = to_json(x);
      return j;
    }
    default: return nullptr;
  }
}

// ---- expressions
struct Tok {
  enum K { Name, Str, Int, Op, End } k = End;
  std::string s;
  int64_t i = 0;
};

std::vector<Tok> lex(const std::string& src) {
  std::vector<Tok> out;
  for (size_t p = 0; p < src.size();) {
    const char c = src[p];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++p;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = p;
      while (e < src.size() && (std::isalnum(static_cast<unsigned char>(src[e])) || src[e] == '_')) ++e;
      out.push_back({Tok::Name, src.substr(p, e - p)});
      p = e;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t e = p;
      while (e < src.size() && std::isdigit(static_cast<unsigned char>(src[e]))) ++e;
      if (e + 1 < src.size() && src[e] == '.' && std::isdigit(static_cast<unsigned char>(src[e + 1])))
        fail(fmt::format("floating-point numbers are not supported ('{}')", src));
      if (e - p > 18) fail(fmt::format("number {} is out of range", src.substr(p, e - p)));
      out.push_back({Tok::Int, "", std::stoll(src.substr(p, e - p))});
      p = e;
    } else if (c == '\'' || c == '"') {
      std::string s;
      size_t e = p + 1;
      for (; e < src.size() && src[e] != c; ++e) {
        if (src[e] == '\\' && e + 1 < src.size()) {
          const char n = src[++e];
          s += n == 'n' ? '\n' : n == 't' ? '\t' : n == 'r' ? '\r' : n;
        } else {
          s += src[e];
        }
      }
      if (e >= src.size()) fail(fmt::format("unterminated string in '{}'", src));
      out.push_back({Tok::Str, s});
      p = e + 1;
    } else {
      static const char* two[] = {"==", "!=", "<=", ">=", "//", "**"};
      std::string op(1, c);
      for (const char* t : two)
        if (src.compare(p, 2, t) == 0) op = t;
      if (std::string("()[]{}.,:|+-*/%~<>=!").find(c) == std::string::npos)
        fail(fmt::format("unexpected '{}' in '{}'", c, src));
      out.push_back({Tok::Op, op});
      p += op.size();
    }
  }
  out.push_back({Tok::End, ""});
  return out;
}

struct Expr;
using ExprP = std::shared_ptr<Expr>;
struct Expr {
  enum K { Lit, Name, Attr, Index, Slice, Call, Filter, Not, Neg, Binary, Cond, ListE, DictE, Test } k;
  Value lit;
  std::string name;  // Name, Attr, Call (function/method), Filter, Binary op, Test
  ExprP a, b, c;
  std::vector<ExprP> args;
  std::vector<std::pair<std::string, ExprP>> kwargs;
  bool negate = false;
};

ExprP node(Expr::K k) {
  auto e = std::make_shared<Expr>();
  e->k = k;
  return e;
}

class Parser {
 public:
  explicit Parser(std::vector<Tok> toks, std::string src) : t_(std::move(toks)), src_(std::move(src)) {}
  const Tok& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  bool is(const char* s, size_t ahead = 0) const { return peek(ahead).k != Tok::Str && peek(ahead).s == s; }
  bool accept(const char* s) {
    if (!is(s)) return false;
    ++i_;
    return true;
  }
  void expect(const char* s) {
    if (!accept(s)) fail(fmt::format("expected '{}' in '{}'", s, src_));
  }
  std::string name() {
    if (peek().k != Tok::Name) fail(fmt::format("expected a name in '{}'", src_));
    return t_[i_++].s;
  }
  bool done() const { return peek().k == Tok::End; }
  void end() {
    if (!done()) fail(fmt::format("unexpected '{}' in '{}'", peek().s, src_));
  }

  // Nesting deeper than this (parentheses, `not not ...`) is refused, not a stack overflow.
  static constexpr int kMaxDepth = 100;
  struct Deeper {
    explicit Deeper(int& d) : d_(d) {
      if (++d_ > kMaxDepth) fail("expressions nest too deep");
    }
    ~Deeper() { --d_; }
    int& d_;
  };

  ExprP expr() {
    Deeper guard(depth_);
    ExprP e = or_expr();
    if (accept("if")) {
      ExprP c = node(Expr::Cond);
      c->b = or_expr();
      c->a = e;
      if (accept("else")) c->c = expr();
      return c;
    }
    return e;
  }
  ExprP or_expr() {
    ExprP e = and_expr();
    while (accept("or")) e = binary("or", e, and_expr());
    return e;
  }
  ExprP and_expr() {
    ExprP e = not_expr();
    while (accept("and")) e = binary("and", e, not_expr());
    return e;
  }
  ExprP not_expr() {
    Deeper guard(depth_);
    if (accept("not")) {
      ExprP n = node(Expr::Not);
      n->a = not_expr();
      return n;
    }
    return compare();
  }
  ExprP compare() {
    ExprP e = concat();
    for (;;) {
      if (is("==") || is("!=") || is("<") || is(">") || is("<=") || is(">=") || is("in")) {
        const std::string op = t_[i_++].s;
        e = binary(op, e, concat());
      } else if (is("not") && is("in", 1)) {
        i_ += 2;
        ExprP n = node(Expr::Not);
        n->a = binary("in", e, concat());
        e = n;
      } else if (accept("is")) {
        ExprP t = node(Expr::Test);
        t->negate = accept("not");
        t->name = name();
        t->a = e;
        e = t;
      } else {
        return e;
      }
    }
  }
  ExprP concat() {
    ExprP e = additive();
    while (accept("~")) e = binary("~", e, additive());
    return e;
  }
  ExprP additive() {
    ExprP e = multiplicative();
    while (is("+") || is("-")) {
      const std::string op = t_[i_++].s;
      e = binary(op, e, multiplicative());
    }
    return e;
  }
  ExprP multiplicative() {
    ExprP e = unary();
    while (is("*") || is("%") || is("//")) {
      const std::string op = t_[i_++].s;
      e = binary(op, e, unary());
    }
    return e;
  }
  ExprP unary() {
    Deeper guard(depth_);
    if (accept("-")) {
      ExprP n = node(Expr::Neg);
      n->a = unary();
      return n;
    }
    return filtered();
  }
  ExprP filtered() {
    ExprP e = postfix();
    while (accept("|")) {
      ExprP f = node(Expr::Filter);
      f->name = name();
      f->a = e;
      if (accept("(")) call_args(*f);
      e = f;
    }
    return e;
  }
  void call_args(Expr& call) {
    while (!accept(")")) {
      if (peek().k == Tok::Name && is("=", 1)) {
        std::string key = name();
        expect("=");
        call.kwargs.emplace_back(key, expr());
      } else {
        call.args.push_back(expr());
      }
      if (!is(")")) expect(",");
    }
  }
  ExprP postfix() {
    ExprP e = primary();
    for (;;) {
      if (accept(".")) {
        ExprP at = node(Expr::Attr);
        at->name = name();
        at->a = e;
        e = at;
      } else if (accept("[")) {
        ExprP ix = node(Expr::Index);
        ix->a = e;
        if (!is(":")) ix->b = expr();
        if (accept(":")) {
          ix->k = Expr::Slice;
          if (!is("]")) ix->c = expr();
        }
        expect("]");
        e = ix;
      } else if (accept("(")) {
        ExprP call = node(Expr::Call);
        call->a = e;
        call_args(*call);
        e = call;
      } else {
        return e;
      }
    }
  }
  ExprP primary() {
    const Tok t = peek();
    ++i_;
    if (t.k == Tok::Str) {
      ExprP l = node(Expr::Lit);
      l->lit = Value::of(t.s);
      while (peek().k == Tok::Str) l->lit.s += t_[i_++].s;  // adjacent literals join
      return l;
    }
    if (t.k == Tok::Int) {
      ExprP l = node(Expr::Lit);
      l->lit = Value::of(t.i);
      return l;
    }
    if (t.k == Tok::Name) {
      ExprP l = node(Expr::Lit);
      if (t.s == "true" || t.s == "True") l->lit = Value::of(true);
      else if (t.s == "false" || t.s == "False") l->lit = Value::of(false);
      else if (t.s == "none" || t.s == "None") l->lit = Value::none();
      else l->k = Expr::Name, l->name = t.s;
      return l;
    }
    if (t.s == "(") {
      ExprP e = expr();
      expect(")");
      return e;
    }
    if (t.s == "[") {
      ExprP l = node(Expr::ListE);
      while (!accept("]")) {
        l->args.push_back(expr());
        if (!is("]")) expect(",");
      }
      return l;
    }
    if (t.s == "{") {
      ExprP d = node(Expr::DictE);
      while (!accept("}")) {
        ExprP key = expr();
        expect(":");
        d->args.push_back(key);
        d->args.push_back(expr());
        if (!is("}")) expect(",");
      }
      return d;
    }
    fail(fmt::format("unexpected '{}' in '{}'", t.s, src_));
  }

 private:
  static ExprP binary(const std::string& op, ExprP a, ExprP b) {
    ExprP e = node(Expr::Binary);
    e->name = op;
    e->a = std::move(a);
    e->b = std::move(b);
    return e;
  }
  std::vector<Tok> t_;
  size_t i_ = 0;
  std::string src_;
  int depth_ = 0;
};

// ---- statements
struct Stmt {
  enum K { Text, Out, If, For, Set } k = Text;
  std::string text;
  ExprP expr;                                          // Out, Set value, For iterable
  std::vector<std::pair<ExprP, std::vector<Stmt>>> branches;  // If (null condition: else)
  std::vector<std::string> vars;                       // For loop variables; Set target (name[, attr])
  ExprP cond;                                          // For's filter
  std::vector<Stmt> body, else_body;                   // For
};

struct Segment {
  enum K { Text, Out, Tag } k;
  std::string body;
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::vector<Segment> segments(const std::string& t) {
  std::vector<Segment> out;
  bool strip_next = false, trim_newline = false;
  size_t p = 0;
  auto add_text = [&](std::string s) {
    if (strip_next) {
      size_t k = 0;
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      s.erase(0, k);
    } else if (trim_newline && !s.empty() && s[0] == '\n') {
      s.erase(0, 1);
    }
    strip_next = trim_newline = false;
    out.push_back({Segment::Text, std::move(s)});
  };
  while (p <= t.size()) {
    const size_t open = t.find('{', p);
    size_t at = open;
    while (at != std::string::npos && at + 1 < t.size() && t[at + 1] != '{' && t[at + 1] != '%' && t[at + 1] != '#')
      at = t.find('{', at + 1);
    if (at == std::string::npos || at + 1 >= t.size()) {
      add_text(t.substr(p));
      break;
    }
    add_text(t.substr(p, at - p));
    const char kind = t[at + 1];
    const std::string close = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
    const size_t end = t.find(close, at + 2);
    if (end == std::string::npos) fail(fmt::format("unclosed '{{{}' at offset {}", kind, at));
    std::string body = t.substr(at + 2, end - at - 2);
    Segment::K k = kind == '{' ? Segment::Out : Segment::Tag;
    std::string& prev = out.back().body;
    if (!body.empty() && body[0] == '-') {
      body.erase(0, 1);
      while (!prev.empty() && std::isspace(static_cast<unsigned char>(prev.back()))) prev.pop_back();
    } else if (kind != '{' && !(body.size() && body[0] == '+')) {
      // lstrip_blocks: blanks from the start of the template's line up to a block tag go.
      size_t k = at;
      while (k > 0 && is_blank(t[k - 1])) --k;
      if (k == 0 || t[k - 1] == '\n')
        for (size_t n = at - k; n > 0 && !prev.empty() && is_blank(prev.back()); --n) prev.pop_back();
    }
    if (!body.empty() && body[0] == '+') body.erase(0, 1);
    bool strip_after = false;
    if (!body.empty() && body.back() == '-') body.pop_back(), strip_after = true;
    if (kind != '#') out.push_back({k, body});
    p = end + 2;
    strip_next = strip_after;
    trim_newline = kind != '{';  // trim_blocks
  }
  return out;
}

class TreeBuilder {
 public:
  explicit TreeBuilder(std::vector<Segment> segs) : s_(std::move(segs)) {}
  // Statements up to a tag whose keyword is in `stops` (returned in `stop`), or the end.
  std::vector<Stmt> block(const std::vector<std::string>& stops, std::string& stop, Parser*& stop_parser) {
    if (++depth_ > 100) fail("blocks nest too deep");
    std::vector<Stmt> out = statements(stops, stop, stop_parser);
    --depth_;
    return out;
  }

 private:
  std::vector<Stmt> statements(const std::vector<std::string>& stops, std::string& stop, Parser*& stop_parser) {
    std::vector<Stmt> out;
    while (i_ < s_.size()) {
      const Segment& seg = s_[i_++];
      if (seg.k == Segment::Text) {
        if (!seg.body.empty()) out.push_back({Stmt::Text, seg.body});
        continue;
      }
      auto parser = std::make_unique<Parser>(lex(seg.body), seg.body);
      if (seg.k == Segment::Out) {
        Stmt st;
        st.k = Stmt::Out;
        st.expr = parser->expr();
        parser->end();
        out.push_back(std::move(st));
        continue;
      }
      const std::string kw = parser->name();
      if (std::find(stops.begin(), stops.end(), kw) != stops.end()) {
        stop = kw;
        parsers_.push_back(std::move(parser));
        stop_parser = parsers_.back().get();
        return out;
      }
      if (kw == "if") out.push_back(if_stmt(*parser));
      else if (kw == "for") out.push_back(for_stmt(*parser));
      else if (kw == "set") out.push_back(set_stmt(*parser));
      else fail(fmt::format("'{{% {} %}}' is not supported", kw));
    }
    if (!stops.empty()) fail(fmt::format("missing '{{% {} %}}'", stops.back()));
    return out;
  }

  Stmt if_stmt(Parser& p) {
    Stmt st;
    st.k = Stmt::If;
    ExprP cond = p.expr();
    p.end();
    for (;;) {
      std::string stop;
      Parser* sp = nullptr;
      std::vector<Stmt> body = block({"elif", "else", "endif"}, stop, sp);
      st.branches.emplace_back(cond, std::move(body));
      if (stop == "endif") return st;
      if (stop == "else") {
        cond = nullptr;
      } else {
        cond = sp->expr();
      }
      sp->end();
    }
  }
  Stmt for_stmt(Parser& p) {
    Stmt st;
    st.k = Stmt::For;
    st.vars.push_back(p.name());
    while (p.accept(",")) st.vars.push_back(p.name());
    p.expect("in");
    st.expr = p.or_expr();
    if (p.accept("if")) st.cond = p.or_expr();
    p.end();
    std::string stop;
    Parser* sp = nullptr;
    st.body = block({"else", "endfor"}, stop, sp);
    if (stop == "else") st.else_body = block({"endfor"}, stop, sp);
    return st;
  }
  Stmt set_stmt(Parser& p) {
    Stmt st;
    st.k = Stmt::Set;
    st.vars.push_back(p.name());
    if (p.accept(".")) st.vars.push_back(p.name());
    p.expect("=");
    st.expr = p.expr();
    p.end();
    return st;
  }
  std::vector<Segment> s_;
  size_t i_ = 0;
  int depth_ = 0;
  std::vector<std::unique_ptr<Parser>> parsers_;
};

// ---- rendering
class Renderer {
 public:
  explicit Renderer(Dict globals) { scopes_.push_back(std::move(globals)); }

  void run(const std::vector<Stmt>& stmts, std::string& out) {
    for (const Stmt& st : stmts) {
      // A template that loops without end (or renders more than any prompt) is refused.
      if (++steps_ > 10'000'000 || out.size() > (size_t{64} << 20)) fail("the template renders too long");
      switch (st.k) {
        case Stmt::Text: out += st.text; break;
        case Stmt::Out: out += str(eval(*st.expr)); break;
        case Stmt::If:
          for (const auto& [cond, body] : st.branches)
            if (!cond || truthy(eval(*cond))) {
              run(body, out);
              break;
            }
          break;
        case Stmt::For: run_for(st, out); break;
        case Stmt::Set: {
          Value v = eval(*st.expr);
          if (st.vars.size() == 1) {
            scopes_.back()[st.vars[0]] = v;
          } else {
            Value ns = lookup(st.vars[0]);
            if (ns.kind != Value::DictK) fail(fmt::format("'{}' is not a namespace", st.vars[0]));
            (*ns.dict)[st.vars[1]] = v;
          }
          break;
        }
      }
    }
  }

 private:
  void run_for(const Stmt& st, std::string& out) {
    const Value seq = eval(*st.expr);
    List items;
    if (seq.kind == Value::ListK) {
      items = *seq.list;
    } else if (seq.kind == Value::DictK) {
      for (const auto& [k, v] : *seq.dict) items.push_back(Value::of(k));
    } else if (seq.kind == Value::Str) {
      for (char c : seq.s) items.push_back(Value::of(std::string(1, c)));
    } else if (seq.kind != Value::Undefined && seq.kind != Value::None) {
      fail("a for loop over something not iterable");
    }
    List kept;
    for (const Value& item : items) {
      scopes_.push_back({});
      bind(st.vars, item);
      if (!st.cond || truthy(eval(*st.cond))) kept.push_back(item);
      scopes_.pop_back();
    }
    if (kept.empty()) {
      run(st.else_body, out);
      return;
    }
    for (size_t k = 0; k < kept.size(); ++k) {
      scopes_.push_back({});
      bind(st.vars, kept[k]);
      const int64_t n = static_cast<int64_t>(kept.size()), i = static_cast<int64_t>(k);
      scopes_.back()["loop"] = Value::of(Dict{{"index", Value::of(i + 1)}, {"index0", Value::of(i)},
                                              {"first", Value::of(k == 0)}, {"last", Value::of(k + 1 == kept.size())},
                                              {"length", Value::of(n)}, {"revindex", Value::of(n - i)},
                                              {"revindex0", Value::of(n - i - 1)}});
      run(st.body, out);
      scopes_.pop_back();
    }
  }

  void bind(const std::vector<std::string>& vars, const Value& item) {
    if (vars.size() == 1) {
      scopes_.back()[vars[0]] = item;
      return;
    }
    if (item.kind != Value::ListK || item.list->size() != vars.size()) fail("cannot unpack a loop item");
    for (size_t k = 0; k < vars.size(); ++k) scopes_.back()[vars[k]] = (*item.list)[k];
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(name); f != it->end()) return f->second;
    return {};
  }

  Value eval(const Expr& e) {
    switch (e.k) {
      case Expr::Lit: return e.lit;
      case Expr::Name: return lookup(e.name);
      case Expr::Attr: {
        const Value o = eval(*e.a);
        if (o.kind == Value::DictK)
          if (auto f = o.dict->find(e.name); f != o.dict->end()) return f->second;
        return {};
      }
      case Expr::Index: {
        const Value o = eval(*e.a), k = eval(*e.b);
        if (o.kind == Value::DictK && k.kind == Value::Str) {
          auto f = o.dict->find(k.s);
          return f == o.dict->end() ? Value() : f->second;
        }
        if ((o.kind == Value::ListK || o.kind == Value::Str) && k.kind == Value::Int) {
          const int64_t n = o.kind == Value::ListK ? static_cast<int64_t>(o.list->size()) : static_cast<int64_t>(o.s.size());
          const int64_t i = k.i < 0 ? k.i + n : k.i;
          if (i < 0 || i >= n) return {};
          return o.kind == Value::ListK ? (*o.list)[static_cast<size_t>(i)] : Value::of(std::string(1, o.s[static_cast<size_t>(i)]));
        }
        return {};
      }
      case Expr::Slice: {
        const Value o = eval(*e.a);
        const int64_t n = o.kind == Value::ListK ? static_cast<int64_t>(o.list->size()) : static_cast<int64_t>(o.s.size());
        auto bound = [&](const ExprP& x, int64_t dflt) {
          if (!x) return dflt;
          const Value v = eval(*x);
          if (v.kind != Value::Int) fail("a slice bound is not an integer");
          return std::clamp(v.i < 0 ? v.i + n : v.i, int64_t{0}, n);
        };
        const int64_t b = bound(e.b, 0), en = std::max(b, bound(e.c, n));
        if (o.kind == Value::ListK) return Value::of(List(o.list->begin() + b, o.list->begin() + en));
        if (o.kind == Value::Str) return Value::of(o.s.substr(static_cast<size_t>(b), static_cast<size_t>(en - b)));
        return {};
      }
      case Expr::Call: return call(e);
      case Expr::Filter: return filter(e);
      case Expr::Not: return Value::of(!truthy(eval(*e.a)));
      case Expr::Neg: {
        const Value v = eval(*e.a);
        if (v.kind != Value::Int) fail("unary minus of a non-integer");
        if (v.i == INT64_MIN) fail("integer overflow");
        return Value::of(-v.i);
      }
      case Expr::Binary: return binary(e);
      case Expr::Cond: return truthy(eval(*e.b)) ? eval(*e.a) : e.c ? eval(*e.c) : Value();
      case Expr::ListE: {
        List l;
        for (const ExprP& x : e.args) l.push_back(eval(*x));
        return Value::of(std::move(l));
      }
      case Expr::DictE: {
        Dict d;
        for (size_t k = 0; k + 1 < e.args.size(); k += 2) d[str(eval(*e.args[k]))] = eval(*e.args[k + 1]);
        return Value::of(std::move(d));
      }
      case Expr::Test: {
        const Value v = eval(*e.a);
        bool r;
        if (e.name == "defined") r = v.kind != Value::Undefined;
        else if (e.name == "undefined") r = v.kind == Value::Undefined;
        else if (e.name == "none") r = v.kind == Value::None;
        else if (e.name == "string") r = v.kind == Value::Str;
        else if (e.name == "number" || e.name == "integer") r = v.kind == Value::Int;
        else if (e.name == "boolean") r = v.kind == Value::Bool;
        else if (e.name == "mapping") r = v.kind == Value::DictK;
        else if (e.name == "sequence" || e.name == "iterable") r = v.kind == Value::ListK || v.kind == Value::Str || v.kind == Value::DictK;
        else fail(fmt::format("test 'is {}' is not supported", e.name));
        return Value::of(r != e.negate);
      }
    }
    return {};
  }

  Value binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      Value a = eval(*e.a);
      return truthy(a) ? eval(*e.b) : a;
    }
    if (op == "or") {
      Value a = eval(*e.a);
      return truthy(a) ? a : eval(*e.b);
    }
    const Value a = eval(*e.a), b = eval(*e.b);
    if (op == "~") return Value::of(str(a) + str(b));
    if (op == "==") return Value::of(equal(a, b));
    if (op == "!=") return Value::of(!equal(a, b));
    if (op == "in") {
      if (b.kind == Value::Str) return Value::of(b.s.find(str(a)) != std::string::npos);
      if (b.kind == Value::ListK) return Value::of(std::any_of(b.list->begin(), b.list->end(), [&](const Value& x) { return equal(a, x); }));
      if (b.kind == Value::DictK) return Value::of(b.dict->count(str(a)) > 0);
      return Value::of(false);
    }
    if (op == "+" && a.kind == Value::Str && b.kind == Value::Str) return Value::of(a.s + b.s);
    if (op == "+" && a.kind == Value::ListK && b.kind == Value::ListK) {
      List l = *a.list;
      l.insert(l.end(), b.list->begin(), b.list->end());
      return Value::of(std::move(l));
    }
    if (a.kind == Value::Int && b.kind == Value::Int) {
      int64_t r = 0;
      if ((op == "+" && __builtin_add_overflow(a.i, b.i, &r)) || (op == "-" && __builtin_sub_overflow(a.i, b.i, &r)) ||
          (op == "*" && __builtin_mul_overflow(a.i, b.i, &r)) || ((op == "%" || op == "//") && a.i == INT64_MIN && b.i == -1))
        fail("integer overflow");
      if (op == "+" || op == "-" || op == "*") return Value::of(r);
      if ((op == "%" || op == "//") && b.i == 0) fail("division by zero");
      if (op == "%") return Value::of(((a.i % b.i) + b.i) % b.i);
      if (op == "//") return Value::of(a.i / b.i - ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0)) ? 1 : 0));
      if (op == "<") return Value::of(a.i < b.i);
      if (op == ">") return Value::of(a.i > b.i);
      if (op == "<=") return Value::of(a.i <= b.i);
      if (op == ">=") return Value::of(a.i >= b.i);
    }
    if (a.kind == Value::Str && b.kind == Value::Str) {
      if (op == "<") return Value::of(a.s < b.s);
      if (op == ">") return Value::of(a.s > b.s);
    }
    fail(fmt::format("'{}' of these operands is not supported", op));
  }

  Value call(const Expr& e) {
    std::vector<Value> args;
    for (const ExprP& x : e.args) args.push_back(eval(*x));
    if (e.a->k == Expr::Name) {
      const std::string& f = e.a->name;
      if (f == "raise_exception") fail(args.empty() ? "raise_exception()" : str(args[0]));
      if (f == "range") {
        int64_t b = 0, en = 0;
        if (args.size() == 1) en = args[0].i;
        else if (args.size() >= 2) b = args[0].i, en = args[1].i;
        if (en - b > 1'000'000) fail("range() of more than a million numbers");
        List l;
        for (int64_t k = b; k < en; ++k) l.push_back(Value::of(k));
        return Value::of(std::move(l));
      }
      if (f == "namespace") {
        Dict d;
        for (const auto& [k, x] : e.kwargs) d[k] = eval(*x);
        return Value::of(std::move(d));
      }
      fail(fmt::format("function '{}' is not supported", f));
    }
    if (e.a->k != Expr::Attr) fail("a call of something not a function");
    const Value o = eval(*e.a->a);
    const std::string& m = e.a->name;
    if (o.kind == Value::Str) {
      std::string s = o.s;
      const std::string chars = args.empty() ? std::string(" \t\n\r\f\v") : str(args[0]);
      if (m == "strip" || m == "lstrip") s.erase(0, std::min(s.size(), s.find_first_not_of(chars)));
      if (m == "strip" || m == "rstrip") {
        const size_t e2 = s.find_last_not_of(chars);
        s.erase(e2 == std::string::npos ? 0 : e2 + 1);
      }
      if (m == "strip" || m == "lstrip" || m == "rstrip") return Value::of(s);
      if (m == "upper" || m == "lower") {
        for (char& c : s) c = static_cast<char>(m == "upper" ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
        return Value::of(s);
      }
      if (m == "startswith" && !args.empty()) return Value::of(s.compare(0, str(args[0]).size(), str(args[0])) == 0);
      if (m == "endswith" && !args.empty()) {
        const std::string x = str(args[0]);
        return Value::of(s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0);
      }
      if (m == "split") {
        const std::string sep = args.empty() ? " " : str(args[0]);
        List parts;
        for (size_t p = 0;;) {
          const size_t q = s.find(sep, p);
          parts.push_back(Value::of(s.substr(p, q == std::string::npos ? std::string::npos : q - p)));
          if (q == std::string::npos || sep.empty()) break;
          p = q + sep.size();
        }
        return Value::of(std::move(parts));
      }
    }
    if (o.kind == Value::DictK) {
      if (m == "items") {
        List l;
        for (const auto& [k, v] : *o.dict) l.push_back(Value::of(List{Value::of(k), v}));
        return Value::of(std::move(l));
      }
      if (m == "get" && !args.empty()) {
        auto f = o.dict->find(str(args[0]));
        return f != o.dict->end() ? f->second : args.size() > 1 ? args[1] : Value::none();
      }
    }
    fail(fmt::format("method '{}' is not supported here", m));
  }

  Value filter(const Expr& e) {
    const Value v = eval(*e.a);
    const std::string& f = e.name;
    if (f == "trim") {
      std::string s = str(v);
      const size_t b = s.find_first_not_of(" \t\n\r\f\v");
      if (b == std::string::npos) return Value::of(std::string());
      return Value::of(s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1));
    }
    if (f == "length" || f == "count") {
      if (v.kind == Value::ListK) return Value::of(static_cast<int64_t>(v.list->size()));
      if (v.kind == Value::DictK) return Value::of(static_cast<int64_t>(v.dict->size()));
      return Value::of(static_cast<int64_t>(str(v).size()));
    }
    if (f == "string") return Value::of(str(v));
    if (f == "upper" || f == "lower") {
      std::string s = str(v);
      for (char& c : s) c = static_cast<char>(f == "upper" ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
      return Value::of(s);
    }
    if (f == "tojson") return Value::of(to_json(v).dump());
    if ((f == "first" || f == "last") && v.kind == Value::ListK)
      return v.list->empty() ? Value() : f == "first" ? v.list->front() : v.list->back();
    fail(fmt::format("filter '{}' is not supported", f));
  }

  std::vector<Dict> scopes_;
  size_t steps_ = 0;
};

}  // namespace

std::string apply_chat_template(const std::string& tmpl, const std::vector<ChatMessage>& messages,
                                bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token) {
  std::string stop;
  Parser* sp = nullptr;
  TreeBuilder builder(segments(tmpl));
  const std::vector<Stmt> tree = builder.block({}, stop, sp);
  List msgs;
  for (const ChatMessage& m : messages)
    msgs.push_back(Value::of(Dict{{"role", Value::of(m.role)}, {"content", Value::of(m.content)}}));
  Renderer r(Dict{{"messages", Value::of(std::move(msgs))},
                  {"add_generation_prompt", Value::of(add_generation_prompt)},
                  {"bos_token", Value::of(bos_token)},
                  {"eos_token", Value::of(eos_token)}});
  std::string out;
  r.run(tree, out);
  return out;
}

}  // namespace vkc::tokenizer
