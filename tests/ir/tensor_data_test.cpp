// Derived tensor data: read() of any range, stream() and data() give the bytes the fill computes,
// and ir::transposed() is the transpose, for every element size and for sources in a file mapping.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>

#include "vkc/ir/tensor_data.h"

namespace vkc::ir {
namespace {

std::vector<uint8_t> counting(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + 7);
  return v;
}

// A derived tensor of `rows` units of `unit` bytes whose byte i is expected[i]; counts fills.
TensorData derived_copy(const std::vector<uint8_t>& expected, size_t unit, int* fills) {
  return TensorData::derived(expected.size(), unit, [&expected, unit, fills](uint64_t first, uint64_t n, uint8_t* out) {
    EXPECT_EQ(first % unit, 0u);
    EXPECT_EQ(n % unit, 0u);
    std::copy(expected.begin() + first, expected.begin() + first + n, out);
    ++*fills;
  });
}

TEST(TensorData, ReadOfAnyRangeOfADerivedTensorGivesItsBytes) {
  const std::vector<uint8_t> expected = counting(7 * 13);
  int fills = 0;
  const TensorData d = derived_copy(expected, 13, &fills);
  for (size_t a = 0; a <= expected.size(); ++a)
    for (size_t b = a; b <= expected.size(); b += 5) {
      std::vector<uint8_t> out(b - a, 0xee);
      d.read(a, out);
      ASSERT_TRUE(std::equal(out.begin(), out.end(), expected.begin() + a)) << a << ".." << b;
    }
  EXPECT_GT(fills, 0);
  EXPECT_TRUE(d.is_derived());
  std::vector<uint8_t> past(2);
  EXPECT_THROW(d.read(expected.size() - 1, past), std::out_of_range);
}

TEST(TensorData, StreamVisitsEveryByteOnceInOrderAndDataComputesOnce) {
  const std::vector<uint8_t> expected = counting(1000);
  int fills = 0;
  const TensorData d = derived_copy(expected, 8 * 5, &fills);
  std::vector<uint8_t> seen;
  d.stream(64, [&](uint64_t offset, std::span<const uint8_t> bytes) {
    EXPECT_EQ(offset, seen.size());
    seen.insert(seen.end(), bytes.begin(), bytes.end());
  });
  EXPECT_EQ(seen, expected);
  fills = 0;
  const TensorData copy = d;  // copies share the computed bytes
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), d.data()));
  EXPECT_EQ(copy.data(), d.data());
  EXPECT_EQ(fills, 1);
  EXPECT_THROW(TensorData::derived(10, 3, [](uint64_t, uint64_t, uint8_t*) {}), std::logic_error);
}

template <typename T>
void expect_transposed(int64_t rows, int64_t cols) {
  std::vector<T> src(static_cast<size_t>(rows * cols));
  std::iota(src.begin(), src.end(), T{1});
  std::vector<uint8_t> bytes(src.size() * sizeof(T));
  std::memcpy(bytes.data(), src.data(), bytes.size());
  const TensorData t = transposed(TensorData::owned(bytes), rows, cols, sizeof(T));
  std::vector<uint8_t> out(t.size());
  // Read in uneven pieces, so that rows are cut anywhere.
  for (size_t at = 0; at < out.size(); at += 37) t.read(at, {out.data() + at, std::min<size_t>(37, out.size() - at)});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      T x;
      std::memcpy(&x, out.data() + (c * rows + r) * sizeof(T), sizeof(T));
      ASSERT_EQ(x, src[r * cols + c]) << r << "," << c;
    }
}

TEST(TensorData, TransposedIsTheTransposeForEveryElementSize) {
  expect_transposed<uint8_t>(5, 3);
  expect_transposed<uint16_t>(70, 130);
  expect_transposed<uint32_t>(129, 65);
  expect_transposed<uint64_t>(3, 200);
  // Past a block of 256 source rows, whole and cut tiles of 64 bytes each way.
  expect_transposed<uint8_t>(300, 200);
  expect_transposed<uint16_t>(600, 96);
  expect_transposed<uint32_t>(513, 48);
  EXPECT_THROW(transposed(TensorData::owned(std::vector<uint8_t>(12)), 2, 2, 4), std::logic_error);
}

// A derived source (a copy made as it is read, as the importer gives a large weight at an
// unaligned offset) is transposed range by range: right, and never computed whole.
TEST(TensorData, TransposedDerivedSourceIsRightAndNotHeldWhole) {
  const int64_t rows = 300, cols = 70;
  std::vector<uint32_t> src(static_cast<size_t>(rows * cols));
  std::iota(src.begin(), src.end(), 7u);
  uint64_t largest = 0;
  const TensorData source = TensorData::derived(src.size() * 4, 1, [&](uint64_t first, uint64_t n, uint8_t* out) {
    largest = std::max(largest, n);
    std::memcpy(out, reinterpret_cast<const uint8_t*>(src.data()) + first, n);
  });
  const TensorData t = transposed(source, rows, cols, 4);
  std::vector<uint8_t> out(t.size());
  for (size_t at = 0; at < out.size(); at += 4 * rows * 3)
    t.read(at, {out.data() + at, std::min<size_t>(4 * rows * 3, out.size() - at)});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      uint32_t x;
      std::memcpy(&x, out.data() + (c * rows + r) * 4, 4);
      ASSERT_EQ(x, src[r * cols + c]) << r << "," << c;
    }
  EXPECT_LT(largest, src.size() * 4) << "the source was computed whole";
}

// equal_bytes over derived tensors compares them a range at a time: equal, and a difference in
// the last byte past the first range found.
TEST(TensorData, EqualBytesComparesDerivedTensorsByRanges) {
  std::vector<uint8_t> bytes((size_t{5} << 20) + 3);
  std::mt19937 rng(9);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  auto derived_of = [](const std::vector<uint8_t>& v) {
    return TensorData::derived(v.size(), 1, [&v](uint64_t first, uint64_t n, uint8_t* out) { std::memcpy(out, v.data() + first, n); });
  };
  std::vector<uint8_t> other = bytes;
  other.back() ^= 1;
  EXPECT_TRUE(equal_bytes(derived_of(bytes), TensorData::owned(bytes)));
  EXPECT_TRUE(equal_bytes(derived_of(bytes), derived_of(bytes)));
  EXPECT_FALSE(equal_bytes(derived_of(bytes), derived_of(other)));
  EXPECT_FALSE(equal_bytes(TensorData::owned(bytes), TensorData::owned(other)));
  EXPECT_FALSE(equal_bytes(derived_of(bytes), TensorData::owned(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1))));
}

// A source in a read-only file mapping: the transpose is right whichever way it is read, and the
// source's pages leave the process once its last column is read.
TEST(TensorData, TransposedFileSourceIsRightAndItsPagesGo) {
  const int64_t rows = 300, cols = 1000;
  const size_t n = static_cast<size_t>(rows * cols) * 4, skew = 100;  // not page aligned
  const std::string path = (std::filesystem::temp_directory_path() / ("vkc-td-" + std::to_string(::getpid()))).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  std::vector<uint32_t> src(static_cast<size_t>(rows * cols));
  std::mt19937 rng(5);
  for (auto& x : src) x = rng();
  ASSERT_EQ(::pwrite(fd, src.data(), n, skew), static_cast<ssize_t>(n));
  void* map = ::mmap(nullptr, n + skew, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ::unlink(path.c_str());
  ASSERT_NE(map, MAP_FAILED);
  const auto* base = static_cast<const uint8_t*>(map) + skew;
  auto resident = [&] {
    const int pm = ::open("/proc/self/pagemap", O_RDONLY);
    const uintptr_t a = reinterpret_cast<uintptr_t>(base) / 4096, e = (reinterpret_cast<uintptr_t>(base) + n) / 4096;
    std::vector<uint64_t> v(e - a);
    const bool ok = pm >= 0 && ::pread(pm, v.data(), v.size() * 8, static_cast<off_t>(a * 8)) == static_cast<ssize_t>(v.size() * 8);
    if (pm >= 0) ::close(pm);
    size_t pages = 0;
    for (uint64_t x : v) pages += x >> 63;
    return ok ? pages : size_t{0};
  };
  const TensorData t = transposed(TensorData::file_view(nullptr, base, n), rows, cols, 4);
  std::vector<uint8_t> out;
  t.stream(4096 * 3, [&](uint64_t, std::span<const uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); });
  for (int64_t r = 0; r < rows; r += 7)
    for (int64_t c = 0; c < cols; c += 3) {
      uint32_t x;
      std::memcpy(&x, out.data() + (c * rows + r) * 4, 4);
      ASSERT_EQ(x, src[r * cols + c]);
    }
  EXPECT_LE(resident(), 1u);  // at most the page the source shares with the file's first bytes
  std::vector<uint8_t> again(t.size());
  t.read(0, again);
  EXPECT_EQ(again, out);
  ::munmap(map, n + skew);
}

// A source of 256 MiB or more given its file is read from the file (pread), a block of rows' band
// of columns at a time: the transpose is right and the mapping is never faulted in. (A sparse file:
// a few rows hold data, the rest reads as zeros.)
TEST(TensorData, TransposedLargeFileSourceIsReadFromTheFile) {
  const int64_t rows = 4096, cols = 16384;
  const size_t n = static_cast<size_t>(rows * cols) * 4, skew = 4096 + 8;
  const std::string path = (std::filesystem::temp_directory_path() / ("vkc-tdl-" + std::to_string(::getpid()))).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ::unlink(path.c_str());
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(n + skew)), 0);
  std::mt19937 rng(11);
  std::vector<std::vector<uint32_t>> data;  // rows r % 97 == 3
  for (int64_t r = 3; r < rows; r += 97) {
    std::vector<uint32_t> row(static_cast<size_t>(cols));
    for (auto& x : row) x = rng();
    ASSERT_EQ(::pwrite(fd, row.data(), row.size() * 4, static_cast<off_t>(skew + r * cols * 4)), static_cast<ssize_t>(row.size() * 4));
    data.push_back(std::move(row));
  }
  void* map = ::mmap(nullptr, n + skew, PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  const auto* base = static_cast<const uint8_t*>(map) + skew;
  const TensorData t = transposed(TensorData::file_view(nullptr, base, n, fd, skew), rows, cols, 4);
  size_t checked = 0;
  auto minor_faults = [] {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
  };
  const long faults_before = minor_faults();
  long faults_after = 0;
  t.stream(size_t{32} << 20, [&](uint64_t at, std::span<const uint8_t> b) {
    const int64_t c0 = static_cast<int64_t>(at / (rows * 4)), nc = static_cast<int64_t>(b.size() / (rows * 4));
    for (int64_t c = c0; c < c0 + nc; c += 5)
      for (int64_t r = 0; r < rows; r += 1 + (r % 97 == 3 ? 0 : 13)) {
        uint32_t x;
        std::memcpy(&x, b.data() + ((c - c0) * rows + r) * 4, 4);
        const uint32_t want = r % 97 == 3 ? data[static_cast<size_t>(r / 97)][static_cast<size_t>(c)] : 0;
        ASSERT_EQ(x, want) << r << "," << c;
        ++checked;
      }
    faults_after = minor_faults();
  });
  EXPECT_GT(checked, size_t{900000});
  // Through the mapping, every band faults pages of every row in again (about 37,000 faults here);
  // from the file, only the buffers' own pages fault (about 9,000).
  EXPECT_LT(faults_after - faults_before, 20000);
  ::munmap(map, n + skew);
  ::close(fd);
}

}  // namespace
}  // namespace vkc::ir
