// ExecuTorch's external data file (.ptd): the layout ExecuTorch's FlatTensorDataMap reads (FT01 at
// byte 4, the FH01 header at byte 8 with the index and segment offsets, 128-aligned segments),
// blobs read back byte for byte, corrupt files refused with one line, and a .pte plus its .ptd read
// as one program (a key in both refused, as ExecuTorch's runtime refuses it).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "vkc/serializer/errors.h"
#include "vkc/serializer/io_names.h"
#include "vkc/serializer/ptd.h"
#include "vkc/serializer/pte_writer.h"

namespace vkc::serializer {
namespace {

uint64_t le64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

std::vector<NamedData> blobs() {
  std::mt19937 rng(3);
  std::vector<NamedData> out;
  for (size_t size : {0u, 1u, 129u, 4096u, 7u}) {
    std::vector<uint8_t> bytes(size);
    for (auto& b : bytes) b = uint8_t(rng());
    out.push_back({"blob_" + std::to_string(size), ir::TensorData::owned(std::move(bytes))});
  }
  return out;
}

TEST(Ptd, LayoutIsWhatExecuTorchReads) {
  const std::vector<uint8_t> b = serialize_ptd(blobs());
  ASSERT_GT(b.size(), 64u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()) + 4, 4), "FT01");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()) + 8, 4), "FH01");
  uint32_t length = 0;
  std::memcpy(&length, b.data() + 12, 4);
  EXPECT_EQ(length, 40u);
  const uint64_t fb_offset = le64(b, 16), fb_size = le64(b, 24), base = le64(b, 32), data_size = le64(b, 40);
  EXPECT_EQ(fb_offset, 48u);  // the 40-byte header padded to the flatbuffer's 16-byte alignment
  EXPECT_EQ(base % 128, 0u);
  EXPECT_GE(base, fb_offset + fb_size);
  EXPECT_EQ(base + data_size, b.size());
  uint32_t root = 0;
  std::memcpy(&root, b.data(), 4);
  EXPECT_LT(root, fb_offset + fb_size);
  EXPECT_GE(root, fb_offset + 8);  // past the spliced header
}

TEST(Ptd, BlobsReadBackByteForByteAndTheWriteIsDeterministic) {
  const auto in = blobs();
  const std::vector<uint8_t> b = serialize_ptd(in);
  EXPECT_EQ(b, serialize_ptd(in));
  const PtdFile f = read_ptd_bytes(b);
  ASSERT_EQ(f.named_data.size(), in.size());
  const uint64_t base = le64(b, 32);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(f.named_data[i].key, in[i].key);
    ASSERT_EQ(f.named_data[i].data.size(), in[i].data.size());
    EXPECT_EQ(std::memcmp(f.named_data[i].data.data(), in[i].data.data(), in[i].data.size()), 0) << in[i].key;
    EXPECT_EQ(uint64_t(f.named_data[i].data.data() - b.data() - base) % 128, 0u) << "segments 128-aligned";
  }
}

TEST(Ptd, FileWriteMatchesTheBytesAndADuplicateKeyIsRefused) {
  const auto dir = std::filesystem::temp_directory_path() / ("vkc_ptd_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_ptd(blobs(), dir / "w.ptd");
  std::ifstream f(dir / "w.ptd", std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(file, serialize_ptd(blobs()));
  auto twice = blobs();
  twice.push_back(twice.front());
  EXPECT_THROW(write_ptd(twice, dir / "twice.ptd"), SerializeError);
  EXPECT_FALSE(std::filesystem::exists(dir / "twice.ptd")) << "no partial file";
  std::filesystem::remove_all(dir);
}

TEST(Ptd, CorruptFilesAreRefusedWithOneLine) {
  const std::vector<uint8_t> good = serialize_ptd(blobs());
  const auto refused = [](std::vector<uint8_t> b, const std::string& want) {
    try {
      read_ptd_bytes(b);
      ADD_FAILURE() << "accepted; wanted: " << want;
    } catch (const SerializeError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  refused({good.begin(), good.begin() + 20}, "not an ExecuTorch external data file");
  auto magic = good;
  magic[9] = 'X';
  refused(magic, "not an ExecuTorch external data file");
  refused({good.begin(), good.begin() + 200}, "exceeds file size 200");  // truncated inside the index or data
  auto index = good;
  for (size_t i = 56; i < 120 && i < index.size(); ++i) index[i] ^= 0xA5;  // the index scrambled
  try {
    read_ptd_bytes(index);
  } catch (const SerializeError& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt .ptd"), std::string::npos) << e.what();
  }
  auto data = good;
  const uint64_t huge = uint64_t(1) << 62;
  std::memcpy(data.data() + 40, &huge, 8);  // segment_data_size past the file
  refused(data, "data [");
}

TEST(Ptd, ExternalDataJoinsTheProgramAndAKeyInBothIsRefused) {
  PteFile pte;
  pte.program.named_data.push_back({"blob_1", ir::TensorData::owned(std::vector<uint8_t>{1})});
  PtdFile ptd = read_ptd_bytes(serialize_ptd(blobs()));
  EXPECT_THROW(attach_external_data(pte, ptd, "w.ptd"), SerializeError);
  pte.program.named_data.front().key = "other";
  attach_external_data(pte, ptd, "w.ptd");
  EXPECT_EQ(pte.program.named_data.size(), 1 + blobs().size());
  Program p;
  p.named_data = blobs();
  p.named_data.push_back({kIoNamesKey, ir::TensorData::owned(std::vector<uint8_t>{0})});
  const auto moved = take_external_data(p);
  EXPECT_EQ(moved.size(), blobs().size());
  ASSERT_EQ(p.named_data.size(), 1u);
  EXPECT_EQ(p.named_data.front().key, kIoNamesKey) << "the I/O names stay in the program";
}

}  // namespace
}  // namespace vkc::serializer
