// tokenizer.json decoders: ByteLevel, ByteFallback, Replace, Fuse, Strip, Metaspace, Sequence.
#include <fmt/format.h>

#include <memory>

#include "hf_components.h"
#include "regex.h"
#include "utf8.h"
#include "vkc/tokenizer/tokenizer.h"

namespace vkc::tokenizer::hf {
namespace {

using Tokens = std::vector<std::string>;

// `<0xAB>` -> 0xAB.
std::optional<uint8_t> byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return std::nullopt;
  unsigned v = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = t[i];
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::toupper(c) - 'A' + 10);
  }
  return static_cast<uint8_t>(v);
}

Tokens byte_level(Tokens tokens) {
  std::string bytes;
  for (const std::string& t : tokens) {
    std::string mapped;
    bool all = true;
    for (char32_t c : utf8::decode(t)) {
      auto b = char_byte(c);
      if (!b) {
        all = false;
        break;
      }
      mapped += static_cast<char>(*b);
    }
    bytes += all ? mapped : t;
  }
  return {utf8::lossy(bytes)};
}

// Runs of <0x..> tokens become their bytes when those are UTF-8, else one U+FFFD per byte.
Tokens byte_fallback(Tokens tokens) {
  Tokens out;
  std::string pending;
  size_t count = 0;
  auto flush = [&] {
    if (!count) return;
    if (utf8::valid(pending)) {
      out.push_back(pending);
    } else {
      std::string r;
      for (size_t i = 0; i < count; ++i) r += "\xEF\xBF\xBD";
      out.push_back(r);
    }
    pending.clear();
    count = 0;
  };
  for (std::string& t : tokens) {
    if (auto b = byte_token(t)) {
      pending += static_cast<char>(*b);
      ++count;
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  return out;
}

hf::Decoder replace(const Json& j) {
  auto [pattern, literal] = pattern_of(j.at("pattern"));
  auto re = std::make_shared<Regex>(pattern, literal);
  std::string content = j.at("content");
  return [re, content](Tokens tokens) {
    for (std::string& t : tokens) {
      std::string out;
      size_t at = 0;
      for (auto [b, e] : re->find_all(t)) {
        out.append(t, at, b - at);
        out += content;
        at = e;
      }
      out.append(t, at);
      t = std::move(out);
    }
    return tokens;
  };
}

hf::Decoder strip(const Json& j) {
  const std::string content = j.at("content");
  const size_t start = static_cast<size_t>(integer(j.value("start", Json(0)), "Strip's start")),
               stop = static_cast<size_t>(integer(j.value("stop", Json(0)), "Strip's stop"));
  return [content, start, stop](Tokens tokens) {
    for (std::string& t : tokens) {
      std::u32string cps = utf8::decode(t), c = utf8::decode(content);
      size_t b = 0, e = cps.size();
      while (b < start && b < e && c.size() == 1 && cps[b] == c[0]) ++b;
      for (size_t k = 0; k < stop && e > b && c.size() == 1 && cps[e - 1] == c[0]; ++k) --e;
      t = utf8::encode(std::u32string_view(cps).substr(b, e - b));
    }
    return tokens;
  };
}

hf::Decoder metaspace(const Json& j) {
  const std::string rep = j.value("replacement", std::string("\xE2\x96\x81"));
  std::string scheme = j.value("prepend_scheme", std::string());
  if (scheme.empty()) scheme = j.value("add_prefix_space", true) ? "always" : "never";
  return [rep, scheme](Tokens tokens) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (size_t k = 0; k < t.size();) {
        if (t.compare(k, rep.size(), rep) == 0) out += ' ', k += rep.size();
        else out += t[k++];
      }
      if (i == 0 && scheme != "never" && !out.empty() && out[0] == ' ') out.erase(0, 1);
      tokens[i] = std::move(out);
    }
    return tokens;
  };
}

}  // namespace

Decoder make_decoder(const Json& j, int depth) {
  if (depth > kMaxSequenceDepth) throw TokenizerError("decoder Sequences nest too deep");
  if (j.is_null())
    return [](Tokens tokens) {
      std::string joined;
      for (size_t i = 0; i < tokens.size(); ++i) joined += (i ? " " : "") + tokens[i];
      return Tokens{joined};
    };
  const std::string type = j.at("type");
  if (type == "ByteLevel") return byte_level;
  if (type == "ByteFallback") return byte_fallback;
  if (type == "Fuse")
    return [](Tokens tokens) {
      std::string joined;
      for (const std::string& t : tokens) joined += t;
      return Tokens{joined};
    };
  if (type == "Replace") return replace(j);
  if (type == "Strip") return strip(j);
  if (type == "Metaspace") return metaspace(j);
  if (type == "Sequence") {
    std::vector<Decoder> seq;
    for (const Json& d : j.at("decoders")) seq.push_back(make_decoder(d, depth + 1));
    return [seq](Tokens tokens) {
      for (const Decoder& d : seq) tokens = d(std::move(tokens));
      return tokens;
    };
  }
  throw TokenizerError(fmt::format("decoder '{}' is not supported (supported: ByteLevel, ByteFallback, Replace, Fuse, "
                                   "Strip, Metaspace, Sequence)", type));
}

}  // namespace vkc::tokenizer::hf
