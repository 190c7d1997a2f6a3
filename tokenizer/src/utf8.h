// UTF-8 as the reference tokenizer libraries read and write it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vkc::tokenizer::utf8 {

/// The length of the character at s[i] (1..4) with its code point in `cp`, or, where s[i] starts
/// no valid character, the length of the invalid run Rust's from_utf8_lossy writes as one U+FFFD
/// (a valid start and its valid continuations, else one byte), with `ok` false.
size_t scan(std::string_view s, size_t i, char32_t& cp, bool& ok);
bool valid(std::string_view s);
void append(std::string& out, char32_t cp);
/// The characters of valid UTF-8 `s`, each as a view into it.
std::vector<std::string_view> chars(std::string_view s);
/// `bytes` with each invalid run replaced by U+FFFD (String::from_utf8_lossy).
std::string lossy(std::string_view bytes);
/// Code points of valid UTF-8.
std::u32string decode(std::string_view s);
std::string encode(std::u32string_view s);

}  // namespace vkc::tokenizer::utf8
