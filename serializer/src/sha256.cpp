#include "vkc/serializer/sha256.h"

#include <nettle/sha2.h>

namespace vkc::serializer {
namespace {

std::string hex_digest(sha256_ctx& ctx) {
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof digest);
  for (uint8_t b : digest) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 0xf]);
  }
  return hex;
}

}  // namespace

std::string sha256_hex(std::span<const uint8_t> bytes) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), bytes.data());
  return hex_digest(ctx);
}

static_assert(sizeof(sha256_ctx) <= 128 && alignof(sha256_ctx) <= 16);

Sha256Stream::Sha256Stream() { sha256_init(reinterpret_cast<sha256_ctx*>(ctx_)); }
void Sha256Stream::update(std::span<const uint8_t> bytes) {
  sha256_update(reinterpret_cast<sha256_ctx*>(ctx_), bytes.size(), bytes.data());
}
std::string Sha256Stream::hex() { return hex_digest(*reinterpret_cast<sha256_ctx*>(ctx_)); }

std::string sha256_hex_of(const ir::TensorData& data) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  data.stream(size_t{8} << 20, [&](uint64_t, std::span<const uint8_t> chunk) { sha256_update(&ctx, chunk.size(), chunk.data()); });
  return hex_digest(ctx);
}

}  // namespace vkc::serializer
