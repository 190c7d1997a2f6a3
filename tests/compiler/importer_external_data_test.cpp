// ONNX importer: external data (mmap, confinement to the model directory, range checks).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "onnx_test_models.h"
#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler {
namespace {

namespace fs = std::filesystem;
using test::float_bytes;
using test::kF32;
using test::ModelBuilder;
using test::TempDir;
using ::testing::HasSubstr;

/// Whether `p` lies in a mapping of `file` (per /proc/self/maps): the bytes were not copied.
bool points_into_mapping_of(const void* p, const fs::path& file) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  const std::string target = fs::canonical(file).string();
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    const auto dash = range.find('-');
    const uintptr_t begin = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (path == target && addr >= begin && addr < end) return true;
  }
  return false;
}

/// X[2,2] -> MatMul W -> Add B -> Y, with W and B as external data in `location`.
ModelBuilder external_model(const std::string& location, uint64_t w_offset, uint64_t w_length = 16) {
  ModelBuilder m;
  m.input("X", kF32, {2, 2});
  m.output("Y", kF32, {2, 2});
  m.external("W", kF32, {2, 2}, location, w_offset, w_length);
  m.external("B", kF32, {2}, location, w_offset + 16, 8);
  m.node("MatMul", {"X", "W"}, {"xw"});
  m.node("Add", {"xw", "B"}, {"Y"});
  return m;
}

/// `junk` junk bytes (default 5), then W = 1..4, then B = {-1, -2}.
std::vector<uint8_t> weights_file(size_t junk = 5) {
  std::vector<uint8_t> bytes(junk, 9);
  for (auto part : {float_bytes({1, 2, 3, 4}), float_bytes({-1, -2})})
    bytes.insert(bytes.end(), part.begin(), part.end());
  return bytes;
}

std::string import_error(const fs::path& path) {
  try {
    import_onnx_file(path);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

TEST(OnnxImporterExternalData, MapsTheFileAndViewsIt) {
  TempDir dir;
  fs::create_directory(dir / "data");
  test::write_file(dir / "data/weights.bin", weights_file(8));
  auto g = import_onnx_file(external_model("data/weights.bin", 8).save(dir / "model.onnx"));

  const ir::Value* w = g->find_value("W");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(w->type().str(), "f32[2,2]");
  EXPECT_EQ(std::vector<uint8_t>(w->data().data(), w->data().data() + 16), float_bytes({1, 2, 3, 4}));
  const ir::Value* b = g->find_value("B");
  EXPECT_EQ(std::vector<uint8_t>(b->data().data(), b->data().data() + 8), float_bytes({-1, -2}));
  EXPECT_TRUE(points_into_mapping_of(w->data().data(), dir / "data/weights.bin"));
  EXPECT_TRUE(points_into_mapping_of(b->data().data(), dir / "data/weights.bin"));
  EXPECT_EQ(g->find_value("xw")->type().str(), "f32[2,2]");
}

// Data at an offset that is no multiple of its element size is copied (kernels read elements in
// place: an unaligned float read is undefined behaviour); its values are the same.
TEST(OnnxImporterExternalData, UnalignedDataIsCopied) {
  TempDir dir;
  test::write_file(dir / "weights.bin", weights_file(5));
  auto g = import_onnx_file(external_model("weights.bin", 5).save(dir / "model.onnx"));
  const ir::Value* w = g->find_value("W");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(std::vector<uint8_t>(w->data().data(), w->data().data() + 16), float_bytes({1, 2, 3, 4}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data().data()) % alignof(float), 0u);
  EXPECT_FALSE(points_into_mapping_of(w->data().data(), dir / "weights.bin"));
  const ir::Value* b = g->find_value("B");
  EXPECT_EQ(std::vector<uint8_t>(b->data().data(), b->data().data() + 8), float_bytes({-1, -2}));
}

TEST(OnnxImporterExternalData, LocationsMustStayInTheModelDirectory) {
  TempDir root;
  fs::create_directory(root / "model");
  test::write_file(root / "secret.bin", weights_file());

  fs::path model = external_model("../secret.bin", 5).save(root / "model/a.onnx");
  EXPECT_EQ(import_error(model),
            model.string() + ": initializer 'W': external data location '../secret.bin' escapes the model directory");

  const std::string absolute = (root / "secret.bin").string();
  EXPECT_THAT(import_error(external_model(absolute, 5).save(root / "model/b.onnx")),
              HasSubstr("initializer 'W': external data location '" + absolute + "' is an absolute path"));

  fs::create_symlink(root / "secret.bin", root / "model/link.bin");
  EXPECT_THAT(import_error(external_model("link.bin", 5).save(root / "model/c.onnx")),
              HasSubstr("external data location 'link.bin' escapes the model directory"));

  EXPECT_THAT(import_error(external_model("sub/../../secret.bin", 5).save(root / "model/d.onnx")),
              HasSubstr("escapes the model directory"));
}

TEST(OnnxImporterExternalData, MissingFileAndBadRanges) {
  TempDir dir;
  test::write_file(dir / "weights.bin", weights_file());
  EXPECT_THAT(import_error(external_model("nope.bin", 5).save(dir / "a.onnx")),
              HasSubstr("initializer 'W': external data file '" + (fs::canonical(dir.path()) / "nope.bin").string() +
                        "' does not exist"));
  EXPECT_THAT(
      import_error(external_model("weights.bin", 20).save(dir / "b.onnx")),
      HasSubstr(
          "initializer 'W': external data offset 20 + length 16 lies beyond the end of 'weights.bin' (29 bytes)"));
  EXPECT_THAT(import_error(external_model("weights.bin", 5, 12).save(dir / "c.onnx")),
              HasSubstr("initializer 'W': external data length 12 does not match its type and shape (16 bytes)"));
}

TEST(OnnxImporterExternalData, BytesNeedABaseDirectory) {
  TempDir dir;
  test::write_file(dir / "weights.bin", weights_file());
  std::string bytes;
  external_model("weights.bin", 5).model.SerializeToString(&bytes);
  std::span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());

  auto g = import_onnx_bytes(span, dir.path());
  EXPECT_EQ(g->find_value("W")->data().as<float>()[3], 4.f);
  try {
    import_onnx_bytes(span, {});
    ADD_FAILURE() << "external data without a base directory was accepted";
  } catch (const ImportError& e) {
    EXPECT_THAT(e.what(), HasSubstr("<model bytes>: initializer 'W': external data 'weights.bin' cannot be resolved"));
  }
}

TEST(OnnxImporterExternalData, ShapeInferenceSeesExternalShapeConstants) {
  TempDir dir;
  std::vector<uint8_t> bytes(24);
  bytes[0] = 3;  // target = int64 {3, 2}
  bytes[8] = 2;
  bytes[16] = 1;  // index = int64 {1}
  test::write_file(dir / "shapes.bin", bytes);
  ModelBuilder m;
  m.input("X", kF32, {2, 3});
  m.output("Y", kF32, {"a", "b"});
  m.output("dim", onnx::TensorProto_DataType_INT64, {"n"});
  m.external("target", onnx::TensorProto_DataType_INT64, {2}, "shapes.bin", 0, 16);
  m.external("index", onnx::TensorProto_DataType_INT64, {1}, "shapes.bin", 16, 8);
  m.node("Reshape", {"X", "target"}, {"Y"});
  m.node("Shape", {"X"}, {"s"});
  m.node("Gather", {"s", "index"}, {"dim"});  // its data propagation reads "index"
  auto g = import_onnx_file(m.save(dir / "reshape.onnx"));
  EXPECT_EQ(g->outputs[0]->type().str(), "f32[3,2]");
  EXPECT_EQ(g->outputs[1]->type().str(), "i64[1]");
  EXPECT_TRUE(points_into_mapping_of(g->find_value("target")->data().data(), dir / "shapes.bin"));
}

TEST(OnnxImporterExternalData, FilesBeyond2GiBUse64BitOffsets) {
  TempDir dir;
  constexpr uint64_t kBig = 3ull << 30;          // a 3 GiB tensor at offset 0
  constexpr uint64_t kSmall = (5ull << 30) + 8;  // a small one past 4 GiB
  {
    const int fd = ::open((dir / "huge.bin").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    auto small = float_bytes({1, 2});
    ASSERT_EQ(::ftruncate(fd, kSmall + small.size()), 0);  // sparse: takes no disk space
    ASSERT_EQ(::pwrite(fd, small.data(), small.size(), kSmall), static_cast<ssize_t>(small.size()));
    ::close(fd);
  }
  ModelBuilder m;
  m.input("X", kF32, {2});
  m.output("Y", kF32, {2});
  m.external("big", kF32, {static_cast<int64_t>(kBig / 4)}, "huge.bin", 0, kBig);
  m.external("small", kF32, {2}, "huge.bin", kSmall, 8);
  m.node("Add", {"X", "small"}, {"Y"});
  auto g = import_onnx_file(m.save(dir / "huge.onnx"));

  const ir::Value* big = g->find_value("big");
  EXPECT_EQ(big->data().size(), kBig);
  EXPECT_EQ(big->data().data()[kBig - 1], 0);
  const ir::Value* small = g->find_value("small");
  EXPECT_EQ(small->data().as<float>()[1], 2.f);
  EXPECT_EQ(small->data().data() - big->data().data(), static_cast<ptrdiff_t>(kSmall));  // one mapping
}

}  // namespace
}  // namespace vkc::compiler
