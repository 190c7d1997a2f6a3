#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "vkc/serializer/errors.h"

namespace vkc::serializer::detail {
namespace {

/// Owns one read-only file mapping.
class Mapping {
 public:
  Mapping(void* address, size_t size) : address_(address), size_(size) {}
  ~Mapping() { ::munmap(address_, size_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

 private:
  void* address_;
  size_t size_;
};

}  // namespace

MappedFile map_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SerializeError(std::strerror(errno));
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const int stat_errno = errno;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw SerializeError(stat_ok ? "not a regular file" : std::strerror(stat_errno));
  }
  if (st.st_size == 0) {
    ::close(fd);
    return {};
  }
  void* address = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (address == MAP_FAILED) throw SerializeError(std::string("mmap failed: ") + std::strerror(map_errno));
  auto mapping = std::make_shared<const Mapping>(address, size_t(st.st_size));
  return {{static_cast<const uint8_t*>(address), size_t(st.st_size)}, mapping};
}

}  // namespace vkc::serializer::detail
