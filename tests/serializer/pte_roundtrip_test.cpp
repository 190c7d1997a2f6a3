#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sample_data.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/pte_reader.h"
#include "vkc/serializer/pte_writer.h"

namespace vkc::serializer {
namespace {

namespace fs = std::filesystem;
using vkc::serializer::samples::bytes_of;
using vkc::serializer::samples::iota_bytes;
using vkc::serializer::samples::sample_program;

uint64_t le(std::span<const uint8_t> b, size_t offset, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) v |= uint64_t(b[offset + i]) << (8 * i);
  return v;
}

std::vector<uint8_t> vec(const ir::TensorData& d) { return {d.data(), d.data() + d.size()}; }

/// A fresh empty directory, removed afterwards.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("vkc_ser_" + std::to_string(::getpid()) + "_" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(PteRoundTrip, ProgramSurvivesWriteAndRead) {
  const Program program = sample_program();
  const std::vector<uint8_t> bytes = serialize_pte(program);
  const PteFile pte = read_pte_bytes(bytes);
  EXPECT_EQ(serialize_pte(pte.program), bytes);  // nothing lost either way

  const Program& p = pte.program;
  ASSERT_EQ(p.plans.size(), 2u);
  const ExecutionPlan& f = p.plans[0];
  EXPECT_EQ(f.name, "forward");
  ASSERT_EQ(f.values.size(), program.plans[0].values.size());
  for (size_t i = 0; i < f.values.size(); ++i) EXPECT_EQ(f.values[i].index(), program.plans[0].values[i].index());
  const auto& t0 = std::get<EtTensor>(f.values[0]);
  EXPECT_EQ(t0.dim_order, (std::vector<uint8_t>{0, 1, 2, 3}));  // default filled in
  EXPECT_EQ(t0.allocation->memory_id, 1u);
  const auto& t1 = std::get<EtTensor>(f.values[1]);
  EXPECT_EQ(t1.scalar_type, ScalarType::Half);
  EXPECT_EQ(t1.dim_order, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(t1.allocation->offset, (uint64_t{3} << 32) | 64);
  EXPECT_EQ(t1.dynamism, ShapeDynamism::DynamicBound);
  EXPECT_EQ(std::get<EtTensor>(f.values[2]).data_buffer_idx, 1u);
  EXPECT_FALSE(std::get<EtTensor>(f.values[2]).allocation);
  EXPECT_EQ(std::get<int64_t>(f.values[6]), -7);
  EXPECT_EQ(std::get<std::string>(f.values[9]), "mode");
  EXPECT_EQ(std::get<EtOptionalTensorList>(f.values[14]).items, (std::vector<int32_t>{0, -1}));
  EXPECT_EQ(f.inputs, (std::vector<int32_t>{0}));
  EXPECT_EQ(f.outputs, (std::vector<int32_t>{1}));
  ASSERT_EQ(f.instructions.size(), 6u);
  EXPECT_EQ(std::get<DelegateCall>(f.instructions[1]).delegate_index, 1);
  EXPECT_EQ(std::get<JumpFalseCall>(f.instructions[4]).cond, 7);
  EXPECT_EQ(f.operators[0].overload, "out");
  EXPECT_EQ(f.non_const_buffer_sizes, (std::vector<int64_t>{0, 1024}));
  ASSERT_EQ(f.delegates.size(), 2u);
  EXPECT_EQ(f.delegates[0].id, "VulkanBackend");
  EXPECT_EQ(f.delegates[0].compile_specs, program.plans[0].delegates[0].compile_specs);
  EXPECT_EQ(vec(f.delegates[0].processed), vec(program.plans[0].delegates[0].processed));
  EXPECT_EQ(vec(f.delegates[1].processed), vec(program.plans[0].delegates[1].processed));
  EXPECT_EQ(vec(p.plans[1].delegates[0].processed), vec(program.plans[0].delegates[0].processed));

  ASSERT_EQ(p.constants.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(vec(p.constants[i]), vec(program.constants[i])) << i;
  ASSERT_EQ(p.named_data.size(), 2u);  // "w0" given twice
  EXPECT_EQ(p.named_data[0].key, "w0");
  EXPECT_EQ(vec(p.named_data[0].data), iota_bytes(300, 0));
  EXPECT_EQ(p.named_data[1].key, "w1");
  EXPECT_EQ(vec(p.named_data[1].data), iota_bytes(7, 100));
}

TEST(PteRoundTrip, ExtendedHeaderAndSegmentLayout) {
  const std::vector<uint8_t> b = serialize_pte(sample_program());
  const PteFile pte = read_pte_bytes(b);
  EXPECT_EQ(std::string(b.begin() + 4, b.begin() + 8), "ET12");
  EXPECT_EQ(std::string(b.begin() + 8, b.begin() + 12), "eh00");
  EXPECT_EQ(le(b, 12, 4), 32u);
  EXPECT_EQ(le(b, 16, 8), pte.program_size);
  EXPECT_EQ(le(b, 24, 8), pte.segment_base_offset);
  EXPECT_EQ(le(b, 32, 8), pte.segment_data_size);
  EXPECT_EQ(pte.segment_base_offset, (pte.program_size + 127) / 128 * 128);
  EXPECT_EQ(pte.segment_base_offset + pte.segment_data_size, b.size());
  EXPECT_EQ(pte.file_size, b.size());

  // constants, 2 distinct delegate payloads, 2 distinct named-data keys
  ASSERT_EQ(pte.segments.size(), 5u);
  EXPECT_EQ(pte.constant_segment_index, 0);
  for (const SegmentInfo& s : pte.segments) EXPECT_EQ(s.offset % 128, 0u);
  for (size_t i = 1; i < pte.segments.size(); ++i)
    EXPECT_GE(pte.segments[i].offset, pte.segments[i - 1].offset + pte.segments[i - 1].size);
  EXPECT_EQ(pte.constant_offsets, (std::vector<uint64_t>{0, 0, 16, 32}));
  EXPECT_EQ(pte.segments[0].size, 32u + 33u);  // last constant unpadded
  EXPECT_EQ(pte.segments[3].size, 300u);
  EXPECT_EQ(pte.segments[4].size, 7u);
  // Padding between segments is zero.
  EXPECT_EQ(b[pte.segment_base_offset + pte.segments[0].size], 0);
}

TEST(PteRoundTrip, ConstantSegmentPresentWithoutConstants) {
  Program p = sample_program();
  p.constants.clear();
  p.plans.resize(1);
  p.plans[0].values.resize(2);
  p.plans[0].instructions = {DelegateCall{0, {0, 1}}};
  const PteFile pte = read_pte_bytes(serialize_pte(p));
  EXPECT_EQ(pte.constant_segment_index, 0);
  EXPECT_EQ(pte.constant_offsets, (std::vector<uint64_t>{0}));
  EXPECT_EQ(pte.segments[0].offset, 0u);
  EXPECT_EQ(pte.segments[0].size, 0u);
  EXPECT_TRUE(pte.program.constants.empty());
}

TEST(PteRoundTrip, NoSegmentBytesMeansNoExtendedHeader) {
  Program p;
  p.plans.push_back({});
  p.plans[0].name = "forward";
  const std::vector<uint8_t> b = serialize_pte(p);
  EXPECT_NE(std::string(b.begin() + 8, b.begin() + 12), "eh00");
  const PteFile pte = read_pte_bytes(b);
  EXPECT_EQ(pte.program_size, b.size());
  EXPECT_EQ(pte.segment_base_offset, 0u);
  EXPECT_EQ(pte.constant_offsets, (std::vector<uint64_t>{0}));
  ASSERT_EQ(pte.segments.size(), 1u);
  EXPECT_EQ(pte.program.plans[0].name, "forward");
}

TEST(PteRoundTrip, OutputIsDeterministic) {
  const std::vector<uint8_t> first = serialize_pte(sample_program());
  EXPECT_EQ(serialize_pte(sample_program()), first);
  TempDir dir;
  write_pte(sample_program(), dir.path / "model.pte");
  std::ifstream in(dir.path / "model.pte", std::ios::binary);
  EXPECT_EQ(std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {}), first);
}

TEST(PteRoundTrip, ReadPteMapsTheFileAndKeepsItAlive) {
  TempDir dir;
  const fs::path out = dir.path / "model.pte";
  write_pte(sample_program(), out);
  write_pte(sample_program(), out);  // replaces atomically
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 1);
  Program program = read_pte(out).program;  // the PteFile is gone; views keep the mapping
  fs::remove(out);
  EXPECT_EQ(vec(program.constants[2]), iota_bytes(33, 40));
  EXPECT_EQ(vec(program.named_data[0].data), iota_bytes(300, 0));
}

TEST(PteRoundTrip, UnalignedInputIsRead) {
  const std::vector<uint8_t> b = serialize_pte(sample_program());
  std::vector<uint8_t> shifted(b.size() + 3);
  std::copy(b.begin(), b.end(), shifted.begin() + 3);
  const PteFile pte = read_pte_bytes(std::span(shifted).subspan(3));
  EXPECT_EQ(vec(pte.program.constants[0]), iota_bytes(5, 10));
}

TEST(PteWrite, InvalidProgramsAreRejectedBeforeWriting) {
  TempDir dir;
  Program bad_delegate = sample_program();
  bad_delegate.plans[0].instructions.push_back(DelegateCall{2, {}});
  EXPECT_THROW(write_pte(bad_delegate, dir.path / "a.pte"), SerializeError);
  Program bad_constant = sample_program();
  std::get<EtTensor>(bad_constant.plans[0].values[2]).data_buffer_idx = 4;
  EXPECT_THROW(serialize_pte(bad_constant), SerializeError);
  Program clash = sample_program();
  clash.named_data.push_back({"w1", bytes_of({1, 2})});
  try {
    write_pte(clash, dir.path / "b.pte");
    ADD_FAILURE() << "no error";
  } catch (const SerializeError& e) {
    EXPECT_STREQ(e.what(), "invalid Program: named data key 'w1' is given twice with different bytes");
  }
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(PteWrite, MissingDirectoryThrowsAndLeavesNothing) {
  TempDir dir;
  const fs::path out = dir.path / "no" / "such" / "dir" / "model.pte";
  EXPECT_THROW(write_pte(sample_program(), out), SerializeError);
  EXPECT_FALSE(fs::exists(dir.path / "no"));
  EXPECT_TRUE(fs::is_empty(dir.path));
}

}  // namespace
}  // namespace vkc::serializer
