// SHA-256 (OpenSSL) for cache keys and library hashes.
#pragma once

#include <openssl/evp.h>

#include <string>
#include <string_view>

namespace vkc::codegen {

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  /// Adds a length-prefixed field, so that ("ab","c") and ("a","bc") differ.
  Sha256& field(std::string_view s) {
    const uint64_t n = s.size();
    EVP_DigestUpdate(ctx_, &n, sizeof n);
    EVP_DigestUpdate(ctx_, s.data(), s.size());
    return *this;
  }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_, md, &len);
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += kDigits[md[i] >> 4];
      out += kDigits[md[i] & 15];
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

}  // namespace vkc::codegen
