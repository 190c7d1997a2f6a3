// SHA-256 (GNU Nettle) for cache keys and library hashes.
#pragma once

#include <nettle/sha2.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace vkc::codegen {

class Sha256 {
 public:
  Sha256() { sha256_init(&ctx_); }

  /// Adds a length-prefixed field, so that ("ab","c") and ("a","bc") differ.
  Sha256& field(std::string_view s) {
    const uint64_t n = s.size();
    sha256_update(&ctx_, sizeof n, reinterpret_cast<const uint8_t*>(&n));
    sha256_update(&ctx_, s.size(), reinterpret_cast<const uint8_t*>(s.data()));
    return *this;
  }
  std::string hex() {
    uint8_t md[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx_, sizeof md, md);
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (uint8_t b : md) {
      out += kDigits[b >> 4];
      out += kDigits[b & 15];
    }
    return out;
  }

 private:
  sha256_ctx ctx_;
};

}  // namespace vkc::codegen
