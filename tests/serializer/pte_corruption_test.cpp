#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error_of.h"
#include "sample_data.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/pte_reader.h"
#include "vkc/serializer/pte_writer.h"

namespace vkc::serializer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using vkc::serializer::samples::sample_program;

void put64(std::vector<uint8_t>& b, size_t offset, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) b[offset + i] = uint8_t(v >> (8 * i));
}

std::string error_of(std::span<const uint8_t> bytes) {
  return vkc::testing::error_of<SerializeError>([&] { read_pte_bytes(bytes); });
}

TEST(PteCorruption, EveryTruncationIsAnError) {
  const std::vector<uint8_t> good = serialize_pte(sample_program());
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_THAT(error_of(std::span(good).first(n)), HasSubstr("corrupt .pte: ")) << n;
}

// Without an extended header the file length is not recorded, so cutting
// trailing bytes nothing refers to is harmless; anything else is an error.
TEST(PteCorruption, TruncatedFileWithoutHeaderIsAnErrorOrIntact) {
  Program p;
  p.plans.push_back({});
  const std::vector<uint8_t> good = serialize_pte(p);
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      EXPECT_EQ(serialize_pte(read_pte_bytes(std::span(good).first(n)).program), good) << n;
    } catch (const SerializeError& e) {
      EXPECT_THAT(e.what(), HasSubstr("corrupt .pte: ")) << n;
    }
  }
}

TEST(PteCorruption, FlippedBytesNeverCrash) {
  const std::vector<uint8_t> good = serialize_pte(sample_program());
  size_t errors = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x10}, uint8_t{0xff}}) {
      std::vector<uint8_t> b = good;
      b[i] ^= mask;
      try {
        read_pte_bytes(b);
      } catch (const SerializeError&) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 0u);
}

TEST(PteCorruption, HeaderAndRangeMessages) {
  const std::vector<uint8_t> good = serialize_pte(sample_program());
  const PteFile pte = read_pte_bytes(good);

  std::vector<uint8_t> b = good;
  put64(b, 16, good.size() + 1);
  EXPECT_EQ(error_of(b), "corrupt .pte: program size " + std::to_string(good.size() + 1) + " exceeds file size " +
                            std::to_string(good.size()));

  b = good;
  b[12] = 16;  // header length
  EXPECT_EQ(error_of(b), "corrupt .pte: extended header length 16 < 24");

  b = good;
  put64(b, 32, pte.segment_data_size + 1);
  EXPECT_THAT(error_of(b), HasSubstr("segment data [offset"));

  // With segment_data_size 0 the header check passes; the per-segment check
  // catches the missing bytes.
  b = good;
  put64(b, 32, 0);
  b.resize(b.size() - 1);
  const SegmentInfo& last = pte.segments.back();
  EXPECT_EQ(error_of(b), "corrupt .pte: segment 4 [offset " + std::to_string(pte.segment_base_offset + last.offset) +
                             ", size " + std::to_string(last.size) + "] exceeds file size " +
                             std::to_string(b.size()));

  b = good;
  b[4] = 'X';
  EXPECT_EQ(error_of(b), "corrupt .pte: program: identifier 'XT12' is not 'ET12'");
}

TEST(PteCorruption, NotAPteFile) {
  const fs::path dir = fs::temp_directory_path() / ("vkc_ser_corrupt_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto read_error = [](const fs::path& path) {
    try {
      read_pte(path);
    } catch (const SerializeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::ofstream(dir / "empty.pte").close();
  std::ofstream(dir / "four.pte") << "abcd";
  EXPECT_EQ(read_error(dir / "empty.pte"), (dir / "empty.pte").string() + ": corrupt .pte: file is empty");
  EXPECT_EQ(read_error(dir / "four.pte"),
            (dir / "four.pte").string() + ": corrupt .pte: file is 4 bytes, too small to hold a program");
  EXPECT_THAT(read_error(dir / "missing.pte"), HasSubstr("No such file or directory"));
  EXPECT_THAT(read_error(dir), HasSubstr("not a regular file"));
  std::ofstream(dir / "text.pte") << "this is definitely not a flatbuffer program file";
  EXPECT_THAT(read_error(dir / "text.pte"), HasSubstr("identifier"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vkc::serializer
