#include "module_cache.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace vkc::codegen {
namespace {

constexpr uint32_t kMagic = 0x4353'4B56;  // "VKSC"

std::optional<std::string> read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_atomic(const std::filesystem::path& path, const std::string& bytes) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ostringstream tid;
  tid << std::this_thread::get_id();
  const std::filesystem::path tmp = path.string() + ".tmp" + tid.str();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return false;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace

std::optional<CachedModule> cache_load(const std::filesystem::path& dir, const std::string& key) {
  const auto bytes = read_all(dir / (key + ".spv"));
  if (!bytes || bytes->size() < 12 || bytes->size() % 4) return std::nullopt;
  uint32_t head[3];
  std::memcpy(head, bytes->data(), sizeof head);
  const size_t note_words = (head[2] + 3) / 4;
  if (head[0] != kMagic || 12 + note_words * 4 > bytes->size()) return std::nullopt;
  CachedModule m;
  m.optimized = head[1] & 1;
  m.note.assign(bytes->data() + 12, head[2]);
  m.spirv.resize((bytes->size() - 12) / 4 - note_words);
  std::memcpy(m.spirv.data(), bytes->data() + 12 + note_words * 4, m.spirv.size() * 4);
  if (m.spirv.size() < 5 || m.spirv[0] != 0x07230203) return std::nullopt;
  return m;
}

void cache_store(const std::filesystem::path& dir, const std::string& key, const CachedModule& m) {
  const uint32_t head[3] = {kMagic, m.optimized ? 1u : 0u, static_cast<uint32_t>(m.note.size())};
  std::string bytes(reinterpret_cast<const char*>(head), sizeof head);
  bytes += m.note;
  bytes.resize((bytes.size() + 3) / 4 * 4, '\0');
  bytes.append(reinterpret_cast<const char*>(m.spirv.data()), m.spirv.size() * 4);
  (void)write_atomic(dir / (key + ".spv"), bytes);
}

bool write_if_changed(const std::filesystem::path& path, const std::string& bytes) {
  if (const auto old = read_all(path); old && *old == bytes) return false;
  if (!write_atomic(path, bytes)) throw std::runtime_error("cannot write " + path.string());
  return true;
}

}  // namespace vkc::codegen
