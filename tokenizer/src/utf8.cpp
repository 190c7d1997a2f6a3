#include "utf8.h"

#include <cstdint>

namespace vkc::tokenizer::utf8 {

size_t scan(std::string_view s, size_t i, char32_t& cp, bool& ok) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  ok = false;
  if (b0 < 0x80) {
    cp = b0;
    ok = true;
    return 1;
  }
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 1;
  }
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return k;
    const auto b = static_cast<uint8_t>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return k;
    cp = (cp << 6) | (b & 0x3F);
  }
  ok = true;
  return n;
}

bool valid(std::string_view s) {
  char32_t cp;
  bool ok = true;
  for (size_t i = 0; i < s.size() && ok;) i += scan(s, i, cp, ok);
  return ok;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::vector<std::string_view> chars(std::string_view s) {
  std::vector<std::string_view> out;
  char32_t cp;
  bool ok;
  for (size_t i = 0; i < s.size();) {
    const size_t n = scan(s, i, cp, ok);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  char32_t cp;
  bool ok;
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = scan(bytes, i, cp, ok);
    if (ok) out.append(bytes.substr(i, n));
    else out += "\xEF\xBF\xBD";
    i += n;
  }
  return out;
}

std::u32string decode(std::string_view s) {
  std::u32string out;
  char32_t cp;
  bool ok;
  for (size_t i = 0; i < s.size();) {
    i += scan(s, i, cp, ok);
    out += ok ? cp : U'\uFFFD';
  }
  return out;
}

std::string encode(std::u32string_view s) {
  std::string out;
  for (char32_t cp : s) append(out, cp);
  return out;
}

}  // namespace vkc::tokenizer::utf8
