// The vulkan backend against the cpu backend on tiny hand-built graphs, one or two operators
// each, over the storages and layouts the shaders serve. Runs on lavapipe in CI, with the
// Khronos validation layer on (each test expects it silent); skipped only without any device.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/error_of.h"
#include "common/gemv_dispatches.h"
#include "vkc/codegen/shader_library.h"
#include "vkc/ir/op_registry.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/shaders/bundle.h"
#include "vulkan_test_util.h"

namespace vkc::test {
namespace {

using serializer::VkDataType;
using V = VkDataType;

class VulkanOps : public VulkanTest {};

// x (in `st`/`ml`) -> op(x, args...) -> out (same representation), compared with cpu.
void unary_case(const char* op, std::vector<VkValue> extra, StorageType st, MemoryLayout ml,
                std::vector<uint32_t> dims = {1, 5, 3, 6}) {
  VkProgramBuilder b;
  const int x = tensor(b, dims, st, ml), out = tensor(b, dims, st, ml);
  std::vector<int32_t> args{x};
  for (auto& v : extra) args.push_back(b.value(v));
  args.push_back(out);
  b.call(op, args);
  b.input(x);
  b.output(out);
  SCOPED_TRACE(op);
  expect_same(b.build(), {random_f32({dims.begin(), dims.end()}, 7, -3, 3)});
}

TEST_F(VulkanOps, UnaryOperatorsOnTexturesAndBuffers) {
  VKC_REQUIRE_VULKAN();
  for (const char* op : {"aten.relu.default", "aten.sigmoid.default", "aten.hardswish.default", "aten.tanh.default",
                         "aten.hardsigmoid.default", "aten.abs.default", "aten.neg.default", "aten.exp.default",
                         "aten.sin.default"})
    unary_case(op, {}, kTex, kC);
  unary_case("aten.relu.default", {}, kBuf, kW);
  unary_case("aten.sigmoid.default", {}, kTex, kW, {2, 7});
  unary_case("aten.clamp.default", {VkValue{-0.5}, VkValue{1.25}}, kTex, kH);
  unary_case("aten.clamp.default", {VkValue{VkNull{}}, VkValue{int64_t{1}}}, kBuf, kW);
  unary_case("aten.leaky_relu.default", {VkValue{0.1}}, kTex, kC);
  unary_case("aten.gelu.default", {VkValue{std::string("none")}}, kBuf, kW);
  unary_case("aten.gelu.default", {VkValue{std::string("tanh")}}, kTex, kC);
}

// More than 65535 workgroups of 64 (4,194,240 items) split the dispatch into rows of
// workgroups: the second row must continue where the first ended (staging copies per element,
// an elementwise op per element on a buffer and per texel on a texture).
TEST_F(VulkanOps, DispatchesOfMoreThan65535WorkgroupsCoverEveryItem) {
  VKC_REQUIRE_VULKAN();
  unary_case("aten.relu.default", {}, kBuf, kW, {1, 1, 4, 1100000});
  unary_case("aten.neg.default", {}, kTex, kW, {1, 1, 1100, 4096});
}

void binary_case(const char* op, std::vector<uint32_t> da, std::vector<uint32_t> db, std::vector<uint32_t> dout,
                 StorageType st, MemoryLayout ma, MemoryLayout mb, MemoryLayout mo, bool alpha) {
  VkProgramBuilder b;
  const int x = tensor(b, da, st, ma), y = tensor(b, db, st, mb), out = tensor(b, dout, st, mo);
  if (alpha) b.call(op, {x, y, b.value(int64_t{2}), out});
  else b.call(op, {x, y, out});
  b.input(x);
  b.input(y);
  b.output(out);
  SCOPED_TRACE(op);
  expect_same(b.build(), {random_f32({da.begin(), da.end()}, 1, 0.5, 2), random_f32({db.begin(), db.end()}, 2, 0.5, 2)});
}

TEST_F(VulkanOps, BinaryOperatorsBroadcastAcrossPackings) {
  VKC_REQUIRE_VULKAN();
  binary_case("aten.add.Tensor", {1, 6, 3, 5}, {1, 6, 3, 5}, {1, 6, 3, 5}, kTex, kC, kC, kC, true);
  binary_case("aten.add.Tensor", {2, 6, 3, 5}, {6, 1, 1}, {2, 6, 3, 5}, kTex, kC, kW, kC, true);
  binary_case("aten.sub.Tensor", {3, 5}, {1, 5}, {3, 5}, kBuf, kW, kW, kW, true);
  binary_case("aten.mul.Tensor", {1, 6, 3, 5}, {1, 6, 1, 1}, {1, 6, 3, 5}, kTex, kC, kC, kC, false);
  binary_case("aten.div.Tensor", {4, 7}, {4, 1}, {4, 7}, kTex, kW, kH, kW, false);
  binary_case("aten.minimum.default", {2, 3, 4}, {2, 3, 4}, {2, 3, 4}, kBuf, kW, kW, kW, false);
  binary_case("aten.pow.Tensor_Tensor", {2, 9}, {2, 9}, {2, 9}, kTex, kW, kW, kW, false);
  // Whole texels of an operand broadcast over other dims (batch too), and one element repeated
  // across the lanes when the packed dim is the broadcast one.
  binary_case("aten.mul.Tensor", {2, 6, 3, 5}, {1, 6, 1, 1}, {2, 6, 3, 5}, kTex, kC, kC, kC, false);
  binary_case("aten.sub.Tensor", {4, 7}, {4, 1}, {4, 7}, kTex, kW, kW, kW, true);
  binary_case("aten.add.Tensor", {1, 1, 3, 5}, {1, 6, 3, 5}, {1, 6, 3, 5}, kTex, kC, kC, kC, true);
}

TEST_F(VulkanOps, SoftmaxAlongPackedAndOtherDims) {
  VKC_REQUIRE_VULKAN();
  for (auto [st, ml, dim] : {std::tuple{kTex, kW, -1}, std::tuple{kTex, kC, -1}, std::tuple{kTex, kC, 1},
                             std::tuple{kBuf, kW, 1}}) {
    for (const char* op : {"aten._softmax.default", "aten._log_softmax.default"}) {
      VkProgramBuilder b;
      const int x = tensor(b, {2, 6, 5}, st, ml), out = tensor(b, {2, 6, 5}, st, ml);
      b.call(op, {x, b.value(int64_t{dim}), b.value(false), out});
      b.input(x);
      b.output(out);
      SCOPED_TRACE(std::string(op) + " dim " + std::to_string(dim));
      expect_same(b.build(), {random_f32({2, 6, 5}, 3, -4, 4)});
    }
  }
}

// Rows of 300 and 301 (>= 256: softmax_wg.glsl, a workgroup per row unit), along the packed dim
// and another, texture and buffer; 301 leaves a partial last texel.
TEST_F(VulkanOps, SoftmaxOverLongRowsUsesAWorkgroupPerRow) {
  VKC_REQUIRE_VULKAN();
  for (int64_t len : {300, 301}) {
    for (auto [st, ml, dim] : {std::tuple{kTex, kW, -1}, std::tuple{kTex, kC, -1}, std::tuple{kBuf, kW, -1},
                               std::tuple{kTex, kW, 1}}) {
      for (const char* op : {"aten._softmax.default", "aten._log_softmax.default"}) {
        const auto l = static_cast<uint32_t>(len);
        const std::vector<uint32_t> dims = dim == 1 ? std::vector<uint32_t>{2, l, 5} : std::vector<uint32_t>{2, 5, l};
        const std::vector<int64_t> shape(dims.begin(), dims.end());
        VkProgramBuilder b;
        const int x = tensor(b, dims, st, ml), out = tensor(b, dims, st, ml);
        b.call(op, {x, b.value(int64_t{dim}), b.value(false), out});
        b.input(x);
        b.output(out);
        SCOPED_TRACE(std::string(op) + " len " + std::to_string(len) + " dim " + std::to_string(dim));
        expect_same(b.build(), {random_f32(shape, 4, -6, 6)});
      }
    }
  }
}

// On the device's own kernel choices and on the GPU ones (VKC_VULKAN_GPU_KERNELS=1).
TEST_F(VulkanOps, Reductions) {
  VKC_REQUIRE_VULKAN();
  struct Case { const char* op; StorageType st; MemoryLayout ml; std::vector<int64_t> dims; bool keep; std::vector<uint32_t> out; };
  for (const char* gpu : {"0", "1"})
  for (const Case& c : {Case{"aten.mean.dim", kTex, kC, {-1, -2}, true, {1, 6, 1, 1}},
                        Case{"aten.sum.dim_IntList", kBuf, kW, {-1}, false, {1, 6, 4}},
                        Case{"aten.amax.default", kTex, kW, {1}, true, {1, 1, 4, 5}},
                        Case{"aten.amax.default", kTex, kC, {1}, true, {1, 1, 4, 5}},
                        Case{"aten.amin.default", kTex, kC, {3}, true, {1, 6, 4, 1}}}) {
    setenv("VKC_VULKAN_GPU_KERNELS", gpu, 1);
    VkProgramBuilder b;
    const int x = tensor(b, {1, 6, 4, 5}, c.st, c.ml), out = tensor(b, c.out, c.st, c.ml);
    std::vector<int32_t> args{x, b.value(VkIntList{c.dims}), b.value(c.keep)};
    if (std::string(c.op) == "aten.mean.dim" || std::string(c.op) == "aten.sum.dim_IntList") args.push_back(b.value(VkNull{}));
    args.push_back(out);
    b.call(c.op, args);
    b.input(x);
    b.output(out);
    SCOPED_TRACE(std::string(c.op) + " gpu kernels " + gpu);
    expect_same(b.build(), {random_f32({1, 6, 4, 5}, 4)});
  }
  unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// Reductions over more elements than one invocation may loop over (llvmpipe stops a shader
// after 65535 loop iterations; PP-OCRv4 det's GlobalAveragePool over 160x160 hit it).
TEST_F(VulkanOps, LargeReductions) {
  VKC_REQUIRE_VULKAN();
  struct Case { const char* op; StorageType st; MemoryLayout ml; std::vector<uint32_t> in, out; std::vector<int64_t> dims; };
  for (const Case& c : {Case{"aten.mean.dim", kTex, kC, {1, 8, 160, 160}, {1, 8, 1, 1}, {-1, -2}},
                        Case{"aten.amax.default", kBuf, kW, {1, 1, 2, 70000}, {1, 1, 2, 1}, {-1}}}) {
    VkProgramBuilder b;
    const int x = tensor(b, c.in, c.st, c.ml), out = tensor(b, c.out, c.st, c.ml);
    std::vector<int32_t> args{x, b.value(VkIntList{c.dims}), b.value(true)};
    if (std::string(c.op) == "aten.mean.dim") args.push_back(b.value(VkNull{}));
    args.push_back(out);
    b.call(c.op, args);
    b.input(x);
    b.output(out);
    SCOPED_TRACE(c.op);
    std::vector<int64_t> shape(c.in.begin(), c.in.end());
    expect_same(b.build(), {random_f32(shape, 5)});
  }
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups),
// compared with cpu; `variant` (the f32 name) is the kernel the backend must choose.
void conv_case(std::vector<uint32_t> in, std::vector<uint32_t> w, std::vector<uint32_t> out, int64_t stride,
               int64_t pad, int64_t dil, bool transposed, int64_t groups, bool bias, bool clamp, const char* variant,
               V dtype = V::Float32) {
  VkProgramBuilder b;
  const int x = tensor(b, in, kTex, kC, dtype), y = tensor(b, out, kTex, kC, dtype);
  size_t wn = 1;
  for (auto d : w) wn *= d;
  const int wt = b.constant(w, random_values(wn, 5));
  const uint32_t c_out = out[1];
  const int bs = bias ? b.constant({c_out}, random_values(c_out, 6)) : b.value(VkNull{});
  std::vector<int32_t> args{x, wt, bs, b.value(VkIntList{{stride, stride}}), b.value(VkIntList{{pad, pad}}),
                            b.value(VkIntList{{dil, dil}}), b.value(transposed), b.value(VkIntList{{0, 0}}),
                            b.value(groups)};
  if (clamp) args.insert(args.end(), {b.value(0.0), b.value(0.5)});
  args.push_back(y);
  b.call(clamp ? "et_vk.conv_with_clamp.default" : "aten.convolution.default", args);
  b.input(x);
  b.output(y);
  const std::string name = std::string(variant) + (dtype == V::Float16 ? "_f16" : "_f32");
  SCOPED_TRACE(name);
  const uint64_t before = runtime::vulkan_variant_dispatches(name);
  if (dtype == V::Float16) expect_same(b.build(), {random_f32({in.begin(), in.end()}, 8)}, 1e-2, 2e-3);
  else expect_same(b.build(), {random_f32({in.begin(), in.end()}, 8)});
  EXPECT_GT(runtime::vulkan_variant_dispatches(name), before) << "the backend chose another kernel";
}

// Each kernel over odd sizes: partial 4-wide output tiles, channel counts that leave texel lanes
// empty (input and output), batches, strides, padding, dilation, clamps, no bias; f32 and f16.
TEST_F(VulkanOps, Convolutions) {
  VKC_REQUIRE_VULKAN();
  for (V dt : {V::Float32, V::Float16}) {
    conv_case({1, 3, 7, 6}, {5, 3, 3, 3}, {1, 5, 7, 6}, 1, 1, 1, false, 1, true, false, "conv2d_tiled", dt);
    conv_case({1, 12, 5, 9}, {7, 12, 1, 1}, {1, 7, 5, 9}, 1, 0, 1, false, 1, false, true, "conv2d_pw", dt);
    conv_case({2, 6, 3, 6}, {13, 6, 1, 1}, {2, 13, 3, 6}, 1, 0, 1, false, 1, true, false, "conv2d_pw", dt);
    conv_case({1, 8, 4, 4}, {4, 8, 1, 1}, {1, 4, 4, 4}, 1, 0, 1, false, 1, true, false, "conv2d_pw", dt);
    conv_case({1, 8, 7, 7}, {5, 8, 1, 1}, {1, 5, 4, 4}, 2, 0, 1, false, 1, true, false, "conv2d_tiled", dt);
    conv_case({2, 8, 9, 5}, {8, 4, 3, 3}, {2, 8, 5, 3}, 2, 1, 1, false, 2, true, false, "conv2d_tiled", dt);
    conv_case({2, 4, 7, 7}, {6, 2, 3, 3}, {2, 6, 2, 2}, 2, 0, 2, false, 2, false, false, "conv2d", dt);
    conv_case({1, 6, 5, 5}, {6, 1, 3, 3}, {1, 6, 5, 5}, 1, 1, 1, false, 6, true, true, "conv2d_dw", dt);
    conv_case({2, 5, 11, 13}, {5, 1, 5, 5}, {2, 5, 6, 7}, 2, 2, 1, false, 5, true, false, "conv2d_dw", dt);
    conv_case({1, 4, 9, 10}, {4, 1, 3, 3}, {1, 4, 9, 10}, 1, 2, 2, false, 4, false, false, "conv2d_dw", dt);
    conv_case({1, 4, 3, 3}, {4, 2, 3, 3}, {1, 2, 7, 7}, 2, 0, 1, true, 1, true, false, "conv_transpose2d_tiled", dt);
    conv_case({2, 6, 4, 5}, {6, 5, 2, 2}, {2, 5, 8, 10}, 2, 0, 1, true, 1, false, true, "conv_transpose2d_tiled", dt);
    conv_case({1, 3, 5, 4}, {3, 9, 3, 3}, {1, 9, 9, 7}, 2, 2, 2, true, 1, true, false, "conv_transpose2d_tiled", dt);
    conv_case({1, 4, 3, 3}, {4, 1, 3, 3}, {1, 4, 7, 7}, 2, 0, 1, true, 4, true, false, "conv_transpose2d", dt);
  }
}

// The split-K kernel (chosen on GPUs for few output tiles and many taps; VKC_VULKAN_GPU_KERNELS=1
// makes lavapipe choose as a GPU does): taps not a multiple of the workgroup, padding, strides,
// channel tails, groups of whole texels, batches.
TEST_F(VulkanOps, ConvolutionsSplitTheTapsOnGpus) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  for (V dt : {V::Float32, V::Float16}) {
    conv_case({1, 260, 3, 2}, {9, 260, 1, 1}, {1, 9, 3, 2}, 1, 0, 1, false, 1, true, false, "conv2d_splitk", dt);
    conv_case({2, 30, 5, 4}, {6, 30, 3, 3}, {2, 6, 3, 2}, 2, 1, 1, false, 1, false, true, "conv2d_splitk", dt);
    conv_case({1, 128, 3, 3}, {8, 64, 3, 3}, {1, 8, 3, 3}, 1, 1, 1, false, 2, true, false, "conv2d_splitk", dt);
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// et_vk.sdpa against cpu: the invocation-per-row kernel (sdpa_row, head dims <= 32), the
// workgroup-per-row one (sdpa_wg) over several 256-key chunks,
// head dims that leave texel lanes empty, masks broadcast over batch and heads (with -inf: causal),
// buffers and textures, f32 and f16; and sdpa.glsl for head dims past 256. GPUs take the
// workgroup-per-row kernel for small head dims too unless there are many rows (gpu: run with
// VKC_VULKAN_GPU_KERNELS=1, which makes lavapipe choose as a GPU does).
TEST_F(VulkanOps, AttentionPerQueryRow) {
  VKC_REQUIRE_VULKAN();
  struct Case {
    uint32_t b, h, s, l, d, dv;
    int mask;  // 0 none, 1 [1, 1, S, L] causal (-inf), 2 [B, H, S, L] values
    const char* variant;
    bool gpu = false;
  };
  for (const Case c : {Case{1, 2, 5, 300, 6, 5, 1, "sdpa_row"}, Case{2, 3, 4, 7, 8, 8, 2, "sdpa_row"},
                       Case{1, 1, 3, 520, 36, 12, 0, "sdpa_wg"}, Case{1, 2, 5, 300, 40, 33, 1, "sdpa_wg"},
                       Case{2, 3, 4, 7, 64, 64, 2, "sdpa_wg"}, Case{1, 1, 2, 9, 260, 4, 2, "sdpa"},
                       Case{1, 2, 5, 300, 6, 5, 1, "sdpa_wg", true}, Case{2, 3, 4, 7, 8, 8, 2, "sdpa_wg", true}}) {
    if (c.gpu) ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
    else ::unsetenv("VKC_VULKAN_GPU_KERNELS");
    for (StorageType st : {kBuf, kTex}) {
      for (V dt : {V::Float32, V::Float16}) {
        VkProgramBuilder b;
        const int q = tensor(b, {c.b, c.h, c.s, c.d}, st, kW, dt), k = tensor(b, {c.b, c.h, c.l, c.d}, st, kW, dt);
        const int v = tensor(b, {c.b, c.h, c.l, c.dv}, st, kW, dt), y = tensor(b, {c.b, c.h, c.s, c.dv}, st, kW, dt);
        std::vector<HostTensor> ins{random_f32({c.b, c.h, c.s, c.d}, 31), random_f32({c.b, c.h, c.l, c.d}, 32),
                                    random_f32({c.b, c.h, c.l, c.dv}, 33)};
        int mask = b.value(VkNull{});
        if (c.mask == 1) {
          std::vector<float> m(size_t{c.s} * c.l);
          for (uint32_t i = 0; i < c.s; ++i)
            for (uint32_t j = 0; j < c.l; ++j) m[i * c.l + j] = j > i + c.l - c.s ? -INFINITY : 0.0f;
          mask = tensor(b, {1, 1, c.s, c.l}, st, kW, dt);
          ins.push_back(HostTensor::of(ir::DType::Float32, {1, 1, c.s, c.l}, m));
        } else if (c.mask == 2) {
          mask = tensor(b, {c.b, c.h, c.s, c.l}, st, kW, dt);
          ins.push_back(random_f32({c.b, c.h, c.s, c.l}, 34, -2, 2));
        }
        b.call("et_vk.sdpa.default", {q, k, v, mask, b.value(0.3), y});
        for (int x : {q, k, v}) b.input(x);
        if (c.mask) b.input(mask);
        b.output(y);
        const std::string name = std::string(c.variant) + (dt == V::Float16 ? "_f16_" : "_f32_") +
                                 (st == kBuf ? "buffer" : "texture3d");
        SCOPED_TRACE(name + " L=" + std::to_string(c.l));
        const uint64_t before = runtime::vulkan_variant_dispatches(name);
        if (dt == V::Float16) expect_same(b.build(), ins, 1e-2, 2e-3);
        else expect_same(b.build(), ins, 1e-4, 1e-5);
        EXPECT_GT(runtime::vulkan_variant_dispatches(name), before) << "the backend chose another kernel";
      }
    }
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

TEST_F(VulkanOps, Pooling) {
  VKC_REQUIRE_VULKAN();
  for (bool max : {true, false}) {
    VkProgramBuilder b;
    const int x = tensor(b, {1, 5, 7, 6}, kTex, kC), y = tensor(b, {1, 5, 4, 3}, kTex, kC);
    const int k = b.value(VkIntList{{3, 3}}), s = b.value(VkIntList{{2, 2}}), p = b.value(VkIntList{{1, 1}});
    if (max) {
      const int idx = tensor(b, {1, 5, 4, 3}, kTex, kC, V::Int32);
      b.call("aten.max_pool2d_with_indices.default",
             {x, k, s, p, b.value(VkIntList{{1, 1}}), b.value(false), b.value(VkValueList{{y, idx}})});
    } else {
      b.call("aten.avg_pool2d.default", {x, k, s, p, b.value(false), b.value(false), b.value(VkNull{}), y});
    }
    b.input(x);
    b.output(y);
    SCOPED_TRACE(max ? "max" : "avg");
    expect_same(b.build(), {random_f32({1, 5, 7, 6}, 9)});
  }
}

// linear_tiled (4 rows x 4 outputs per invocation, weights packed at load): rows, N and K that leave
// partial tiles and empty lanes, 3-D inputs (several texture slices), addmm's [K, N] weight and
// alpha/beta, no bias; buffers and textures, f32 and f16. GPUs take linear_tiled_r1 (one row per
// invocation) for so few invocations (VKC_VULKAN_GPU_KERNELS=1 makes lavapipe choose as they do).
TEST_F(VulkanOps, TiledLinear) {
  VKC_REQUIRE_VULKAN();
  for (const bool gpu : {false, true})
  for (StorageType st : {kBuf, kTex}) {
    for (V dt : {V::Float32, V::Float16}) {
      if (gpu) ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
      else ::unsetenv("VKC_VULKAN_GPU_KERNELS");
      const std::string name = std::string(gpu ? "linear_tiled_r1" : "linear_tiled") + (dt == V::Float16 ? "_f16_" : "_f32_") +
                               (st == kBuf ? "buffer" : "texture3d");
      SCOPED_TRACE(name);
      const uint64_t before = runtime::vulkan_variant_dispatches(name);
      VkProgramBuilder b;
      const int x = tensor(b, {2, 9, 7}, st, kW, dt), h = tensor(b, {2, 9, 5}, st, kW, dt);
      const int y = tensor(b, {2, 9, 10}, st, kW, dt), z = tensor(b, {18, 3}, st, kW, dt);
      const int hz = tensor(b, {18, 10}, st, kW, dt);
      b.call("aten.linear.default", {x, b.constant({5, 7}, random_values(35, 1)), b.constant({5}, random_values(5, 2)), h});
      b.call("aten.linear.default", {h, b.constant({10, 5}, random_values(50, 3)), b.value(VkNull{}), y});
      b.call("aten.view_copy.default", {y, b.value(VkIntList{{18, 10}}), hz});
      b.call("aten.addmm.default", {b.constant({3}, random_values(3, 4)), hz, b.constant({10, 3}, random_values(30, 5)),
                                    b.value(0.5), b.value(2.0), z});
      b.input(x);
      b.output(y);
      b.output(z);
      if (dt == V::Float16) expect_same(b.build(), {random_f32({2, 9, 7}, 17)}, 1e-2, 5e-3);
      else expect_same(b.build(), {random_f32({2, 9, 7}, 17)});
      EXPECT_EQ(runtime::vulkan_variant_dispatches(name), before + 3);
    }
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

TEST_F(VulkanOps, LinearAddmmAndMatmul) {
  VKC_REQUIRE_VULKAN();
  for (StorageType st : {kBuf, kTex}) {
    VkProgramBuilder b;
    const int x = tensor(b, {3, 6}, st, kW), h = tensor(b, {3, 5}, st, kW), y = tensor(b, {3, 4}, st, kW);
    b.call("aten.linear.default", {x, b.constant({5, 6}, random_values(30, 1)), b.constant({5}, random_values(5, 2)), h});
    b.call("aten.addmm.default", {b.constant({4}, random_values(4, 3)), h, b.constant({5, 4}, random_values(20, 4)),
                                  b.value(0.5), b.value(2.0), y});
    b.input(x);
    b.output(y);
    expect_same(b.build(), {random_f32({3, 6}, 10)});
  }
  for (StorageType st : {kBuf, kTex}) {
    VkProgramBuilder b;
    const int x = tensor(b, {2, 3, 6}, st, kW), m = tensor(b, {2, 6, 5}, st, kW), y = tensor(b, {2, 3, 5}, st, kW);
    b.call("aten.bmm.default", {x, m, y});
    b.input(x);
    b.input(m);
    b.output(y);
    expect_same(b.build(), {random_f32({2, 3, 6}, 11), random_f32({2, 6, 5}, 12)});
  }
}

// Few outputs and a long K (K = 300, 7 outputs of N = 7 for 2 rows): linear_splitk.glsl, each
// output a workgroup's shared-memory sum; also with a K that is not a multiple of 4 or of 64.
// GPUs choose it (VKC_VULKAN_GPU_KERNELS=1 makes lavapipe choose as they do; on a CPU device the
// tiled kernel is faster), and the tiled kernel runs the same cases without it.
TEST_F(VulkanOps, LinearWithALongKSplitsItAcrossAWorkgroup) {
  VKC_REQUIRE_VULKAN();
  for (const bool gpu : {true, false})
  for (uint32_t k : {300u, 129u}) {
    if (gpu) ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
    else ::unsetenv("VKC_VULKAN_GPU_KERNELS");
    for (StorageType st : {kBuf, kTex}) {
      VkProgramBuilder b;
      const int x = tensor(b, {2, k}, st, kW), y = tensor(b, {2, 7}, st, kW);
      b.call("aten.linear.default", {x, b.constant({7, k}, random_values(static_cast<size_t>(7 * k), 5)),
                                     b.constant({7}, random_values(7, 6)), y});
      b.input(x);
      b.output(y);
      SCOPED_TRACE(k);
      expect_same(b.build(), {random_f32({2, k}, 13)});
    }
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// One or a few rows on a GPU (decoding): linear_gemv.glsl, a workgroup per 4 outputs reading the
// weights in 16-byte chunks (4 f32 / 8 f16 weights). N = 9 leaves a partial block of outputs;
// K = 72 is 18 / 9 whole chunks; 1 and 3 rows; buffers and textures. K = 5000 (past 2048) runs the
// subgroup family's 256-invocation copy (_w256, VKC_VULKAN_GEMV_WIDE=1) where the device has
// subgroups, never the 64-wide one. K = 130 (not whole chunks) and 5 rows (K = 136) keep the
// split-K kernel.
TEST_F(VulkanOps, LinearOfFewRowsReadsTheWeightsInChunks) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  ::setenv("VKC_VULKAN_GEMV_WIDE", "1", 1);
  struct Case { uint32_t rows, k; bool gemv; };
  for (V dt : {V::Float32, V::Float16})
    for (StorageType st : {kBuf, kTex})
      for (const Case& c : {Case{1, 72, true}, Case{3, 72, true}, Case{1, 5000, true}, Case{1, 130, false},
                            Case{5, 136, false}}) {
        VkProgramBuilder b;
        const int x = tensor(b, {c.rows, c.k}, st, kW, dt), y = tensor(b, {c.rows, 9}, st, kW, dt);
        b.call("aten.linear.default", {x, b.constant({9, c.k}, random_values(static_cast<size_t>(9 * c.k), 5)),
                                       b.constant({9}, random_values(9, 6)), y});
        b.input(x);
        b.output(y);
        const std::string name = std::string(c.gemv ? "linear_gemv" : "linear_splitk") +
                                 (dt == V::Float16 ? "_f16" : "_f32") + (st == kBuf ? "_buffer" : "_texture3d");
        SCOPED_TRACE(name + " rows " + std::to_string(c.rows) + " k " + std::to_string(c.k));
        const bool long_k = c.k > 2048;
        const std::string sg_narrow = std::string("linear_gemv_sg") + name.substr(std::string("linear_gemv").size());
        const uint64_t before = gemv_dispatches(name) + gemv_dispatches(wide_variant(name));
        const uint64_t sg_before = runtime::vulkan_variant_dispatches(sg_narrow);
        const HostTensor in = random_f32({c.rows, c.k}, 13);
        if (dt == V::Float16) expect_same(b.build(), {in}, 1e-2, long_k ? 1e-2 : 2e-3);
        else expect_same(b.build(), {in});
        EXPECT_GT(gemv_dispatches(name) + (long_k ? gemv_dispatches(wide_variant(name)) : 0), before)
            << "the backend chose another kernel";
        if (long_k) EXPECT_EQ(runtime::vulkan_variant_dispatches(sg_narrow), sg_before) << "64 invocations for K " << c.k;
      }
  ::unsetenv("VKC_VULKAN_GEMV_WIDE");
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// Constants reach device-local memory through a staging buffer where the device has no room for
// them in memory the host maps (a discrete GPU's 256 MiB BAR heap, once full): forced here with
// VKC_VULKAN_STAGED_UPLOAD (a staging buffer of 1000 bytes, so each constant crosses in several
// pieces, the last partial), an fp linear's weights and bias and an int4 linear's packed weights,
// scales and bias give the same outputs as mapped constants, bit for bit, and the staged bytes are
// counted.
TEST_F(VulkanOps, ConstantsStagedIntoDeviceMemoryGiveTheSameOutputs) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  constexpr uint32_t kK = 256, kN = 12, kGroup = 32;
  VkProgramBuilder b;
  const int x = tensor(b, {1, kK}, kTex, kW), h = tensor(b, {1, kK}, kTex, kW), y = tensor(b, {1, kN}, kTex, kW);
  b.call("aten.linear.default", {x, b.constant({kK, kK}, random_values(size_t{kK} * kK, 5)),
                                 b.constant({kK}, random_values(kK, 6)), h});
  std::vector<uint8_t> q4(size_t{kN} * kK / 2);
  for (size_t i = 0; i < q4.size(); ++i) q4[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  b.call("et_vk.linear_q4gsw.default",
         {h, b.constant_bytes({kN, kK / 2}, V::UInt8, q4),
          b.constant({kK / kGroup, kN}, random_values(size_t{kK} / kGroup * kN, 7)), b.value(int64_t{kGroup}),
          b.constant({kN}, random_values(kN, 8)), y});
  b.input(x);
  b.output(y);
  const serializer::PteFile pte = b.build();
  const std::vector<HostTensor> in{random_f32({1, kK}, 9)};
  const auto mapped = runtime::Executor::from_pte(pte, *vulkan()).run(in);
  const uint64_t before = runtime::vulkan_staged_upload_bytes();
  ::setenv("VKC_VULKAN_STAGED_UPLOAD", "1000", 1);
  const auto staged = runtime::Executor::from_pte(pte, *vulkan()).run(in);
  ::unsetenv("VKC_VULKAN_STAGED_UPLOAD");
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
  // The fp weights alone are 256 KiB; every constant went through the staging buffer.
  EXPECT_GE(runtime::vulkan_staged_upload_bytes() - before, uint64_t{kK} * kK * 4 + q4.size());
  ASSERT_EQ(staged.size(), 1u);
  ASSERT_EQ(mapped.size(), 1u);
  const runtime::Comparison c = runtime::compare(staged[0], mapped[0], 0.0, 0.0);
  EXPECT_TRUE(c.pass()) << c.mismatches << " mismatches, max abs " << c.max_abs;
  expect_same(pte, in, 1e-4, 1e-4);
}

// A matrix-vector linear whose only reader is a view splitting its last dim ([1, S, N] ->
// [1, S, N / D, D], Q/K/V into heads) writes the view's tensor itself: no view dispatch runs.
TEST_F(VulkanOps, AFewRowLinearWritesTheViewThatSplitsItsOutput) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  for (StorageType st : {kBuf, kTex}) {
    VkProgramBuilder b;
    const int x = tensor(b, {1, 2, 64}, st, kW), y = tensor(b, {1, 2, 32}, st, kW), z = tensor(b, {1, 2, 4, 8}, st, kW);
    const int w = tensor(b, {1, 2, 4, 8}, st, kW);
    b.call("aten.linear.default", {x, b.constant({32, 64}, random_values(32 * 64, 5)), b.value(VkNull{}), y});
    b.call("aten.view_copy.default", {y, b.value(VkIntList{{1, 2, 4, 8}}), z});
    b.call("aten.relu.default", {z, w});
    b.input(x);
    b.output(w);
    const std::string view = std::string("view_f32_") + (st == kBuf ? "buffer" : "texture3d");
    SCOPED_TRACE(view);
    const uint64_t before = gemv_dispatches(view);
    expect_same(b.build(), {random_f32({1, 2, 64}, 13)});
    EXPECT_EQ(gemv_dispatches(view), before) << "the view ran as its own dispatch";
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// A matrix-vector linear whose only reader is an add (alpha 1) or a mul with another tensor of its
// shape (a residual add, SiLU(gate) * up) runs it in its own dispatch (the _ep variants). K = 5000
// is several spans of the 64-invocation kernels (1,024 inputs a span in f32, 2,048 in f16: 5 and
// 3), each span's weights loaded a span ahead (vkc_linear_gemv.glslh's GEMV_PREFETCH).
TEST_F(VulkanOps, AFewRowLinearRunsTheAddOrMulThatAloneReadsIt) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  struct Case { V dt; uint32_t k; };
  for (const Case& c : {Case{V::Float32, 64}, Case{V::Float32, 5000}, Case{V::Float16, 5000}})
  for (StorageType st : {kBuf, kTex})
    for (const char* op : {"aten.add.Tensor", "aten.mul.Tensor"}) {
      VkProgramBuilder b;
      const int x = tensor(b, {1, 1, c.k}, st, kW, c.dt), r = tensor(b, {1, 1, 36}, st, kW, c.dt);
      const int y = tensor(b, {1, 1, 36}, st, kW, c.dt), z = tensor(b, {1, 1, 36}, st, kW, c.dt);
      const int w = tensor(b, {1, 1, 36}, st, kW, c.dt);
      b.call("aten.linear.default",
             {x, b.constant({36, c.k}, random_values(size_t{36} * c.k, 5)), b.value(VkNull{}), y});
      if (std::string(op) == "aten.add.Tensor") b.call(op, {r, y, b.value(1.0), z});
      else b.call(op, {y, r, z});
      b.call("aten.relu.default", {z, w});
      b.input(x);
      b.input(r);
      b.output(w);
      const std::string st_name = st == kBuf ? "buffer" : "texture3d";
      const std::string dt_name = c.dt == V::Float16 ? "_f16_" : "_f32_";
      const std::string binary = std::string(op == std::string("aten.add.Tensor") ? "add" : "mul") + dt_name + st_name;
      const std::string ep = "linear_gemv_ep" + dt_name + st_name;
      SCOPED_TRACE(ep + " " + op + " k " + std::to_string(c.k));
      const uint64_t binary_before = gemv_dispatches(binary);
      const uint64_t ep_before = gemv_dispatches(ep);
      const std::vector<HostTensor> in{random_f32({1, 1, c.k}, 13), random_f32({1, 1, 36}, 14)};
      if (c.dt == V::Float16) expect_same(b.build(), in, 1e-2, 1e-2);
      else expect_same(b.build(), in, 1e-4, 1e-4);
      EXPECT_EQ(gemv_dispatches(binary), binary_before) << "the binary op ran as its own dispatch";
      EXPECT_GT(gemv_dispatches(ep), ep_before);
    }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// Two or three matrix-vector linears in a row over one input (a decode step's Q, K and V), each
// followed or not by the view that splits it into heads, run as one dispatch (linear_gemv_multi),
// with the RMSNorm before them inside it when its input is read later (linear_gemv_multi_norm).
TEST_F(VulkanOps, FewRowLinearsOverOneInputRunAsOneDispatch) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  for (StorageType st : {kBuf, kTex})
    for (const bool norm : {false, true})
      for (const int siblings : {2, 3}) {
        VkProgramBuilder b;
        const int x = tensor(b, {1, 2, 64}, st, kW), y = norm ? tensor(b, {1, 2, 64}, st, kW) : x;
        if (norm) b.call("et_vk.rms_norm.default", {x, b.constant({64}, random_values(64, 9)), b.value(1e-5), y});
        const int q = tensor(b, {1, 2, 32}, st, kW), qh = tensor(b, {1, 2, 4, 8}, st, kW);
        const int k = tensor(b, {1, 2, 16}, st, kW), kh = tensor(b, {1, 2, 2, 8}, st, kW);
        const int v = tensor(b, {1, 2, 16}, st, kW);
        b.call("aten.linear.default", {y, b.constant({32, 64}, random_values(32 * 64, 5)), b.constant({32}, random_values(32, 6)), q});
        b.call("aten.view_copy.default", {q, b.value(VkIntList{{1, 2, 4, 8}}), qh});
        b.call("aten.linear.default", {y, b.constant({16, 64}, random_values(16 * 64, 7)), b.value(VkNull{}), k});
        b.call("aten.view_copy.default", {k, b.value(VkIntList{{1, 2, 2, 8}}), kh});
        if (siblings == 3)
          b.call("aten.linear.default", {y, b.constant({16, 64}, random_values(16 * 64, 8)), b.constant({16}, random_values(16, 4)), v});
        const int qo = tensor(b, {1, 2, 4, 8}, st, kW), ko = tensor(b, {1, 2, 2, 8}, st, kW), xo = tensor(b, {1, 2, 64}, st, kW);
        b.call("aten.relu.default", {qh, qo});
        b.call("aten.relu.default", {kh, ko});
        if (norm) b.call("aten.add.Tensor", {x, x, b.value(1.0), xo});  // the norm's input read after the linears
        b.input(x);
        b.output(qo);
        b.output(ko);
        if (siblings == 3) b.output(v);
        if (norm) b.output(xo);
        const std::string st_name = st == kBuf ? "buffer" : "texture3d";
        const std::string multi = std::string(norm ? "linear_gemv_multi_norm_f32_" : "linear_gemv_multi_f32_") + st_name;
        SCOPED_TRACE(multi + " siblings " + std::to_string(siblings));
        const uint64_t before = gemv_dispatches(multi);
        const uint64_t single = gemv_dispatches("linear_gemv_f32_" + st_name) +
                                gemv_dispatches("linear_gemv_norm_f32_" + st_name);
        expect_same(b.build(), {random_f32({1, 2, 64}, 13)});
        EXPECT_EQ(gemv_dispatches(multi), before + 1);
        EXPECT_EQ(gemv_dispatches("linear_gemv_f32_" + st_name) +
                      gemv_dispatches("linear_gemv_norm_f32_" + st_name),
                  single)
            << "a linear ran as its own dispatch";
      }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// A delegate input that only select_as_symint reads (a decode step's input_pos once the attention
// and the rotary take it as their start_pos) is read from its staging buffer: no copy into its
// tensor. Read by a kernel too, it is copied.
TEST_F(VulkanOps, AnInputOnlyASymIntReadsIsNotCopiedIntoItsTensor) {
  VKC_REQUIRE_VULKAN();
  for (const bool also_read : {false, true}) {
    VkProgramBuilder b;
    const int x = tensor(b, {1, 4}, kTex, kW), y = tensor(b, {1, 4}, kTex, kW);
    const int pos = tensor(b, {1}, kTex, kW, V::Int32), twice = tensor(b, {1}, kTex, kW, V::Int32);
    b.call("et_vk.select_as_symint.default", {pos, b.value(int64_t{0}), b.value(int64_t{0}), b.value(serializer::VkSymInt{0})});
    b.call("aten.relu.default", {x, y});
    if (also_read) b.call("aten.add.Tensor", {pos, pos, b.value(int64_t{1}), twice});
    b.input(x);
    b.input(pos, serializer::ScalarType::Long);
    b.output(y);
    if (also_read) b.output(twice);
    SCOPED_TRACE(also_read ? "read by an add too" : "read by select_as_symint alone");
    const uint64_t before = runtime::vulkan_variant_dispatches("copy_i32_buffer_texture3d");
    std::vector<HostTensor> inputs{random_f32({1, 4}, 3), HostTensor::of(ir::DType::Int64, {1}, std::vector<int64_t>{5})};
    expect_same(b.build(), inputs);
    EXPECT_EQ(runtime::vulkan_variant_dispatches("copy_i32_buffer_texture3d") > before, also_read);
  }
}

// An RMSNorm whose output only a matrix-vector linear reads (a decode step's final norm and head)
// runs inside the linear when nothing up to it writes the norm's input's memory, though nothing
// reads that input later; planned into the linear's output's memory, the norm dispatches itself.
TEST_F(VulkanOps, AnRmsNormRunsInsideTheLinearUnlessItsInputsMemoryIsOverwritten) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  for (StorageType st : {kBuf, kTex})
    for (const bool shared : {false, true}) {
      VkProgramBuilder b;
      const auto in_memory = [&](std::vector<uint32_t> d, int32_t mem) {
        serializer::VkTensor v;
        v.dims = std::move(d);
        v.storage = st;
        v.layout = kW;
        v.mem_obj_id = mem;
        return b.value(v);
      };
      const int x = tensor(b, {1, 1, 64}, st, kW), r = in_memory({1, 1, 64}, 0), y = tensor(b, {1, 1, 64}, st, kW);
      const int out = in_memory({1, 1, 32}, shared ? 0 : 1);
      b.call("aten.relu.default", {x, r});
      b.call("et_vk.rms_norm.default", {r, b.constant({64}, random_values(64, 9)), b.value(1e-5), y});
      b.call("aten.linear.default", {y, b.constant({32, 64}, random_values(32 * 64, 5)), b.value(VkNull{}), out});
      b.input(x);
      b.output(out);
      const std::string st_name = st == kBuf ? "buffer" : "texture3d";
      SCOPED_TRACE(st_name + (shared ? ", the output in the norm input's memory" : ""));
      const auto norms = [&] { return gemv_dispatches("rms_norm_f32_" + st_name) + gemv_dispatches("rms_norm_wg_f32_" + st_name); };
      const uint64_t before = norms();
      expect_same(b.build(), {random_f32({1, 1, 64}, 13)});
      EXPECT_EQ(norms(), before + (shared ? 1 : 0));
    }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// An MLP's gate and up projections over one input with SiLU(gate) * up (sigmoid, mul, the up
// linear, mul) run as one dispatch (linear_gemv_dual), the sigmoid and the muls dispatching nothing.
TEST_F(VulkanOps, AGatedPairOfFewRowLinearsRunsAsOneDispatch) {
  VKC_REQUIRE_VULKAN();
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  for (StorageType st : {kBuf, kTex})
    for (const bool up_first : {false, true}) {  // mul(silu, up) or mul(up, silu)
      VkProgramBuilder b;
      const int x = tensor(b, {1, 2, 64}, st, kW), g = tensor(b, {1, 2, 36}, st, kW), s = tensor(b, {1, 2, 36}, st, kW);
      const int m = tensor(b, {1, 2, 36}, st, kW), u = tensor(b, {1, 2, 36}, st, kW), h = tensor(b, {1, 2, 36}, st, kW);
      b.call("aten.linear.default", {x, b.constant({36, 64}, random_values(36 * 64, 5)), b.constant({36}, random_values(36, 6)), g});
      b.call("aten.sigmoid.default", {g, s});
      b.call("aten.mul.Tensor", {g, s, m});
      b.call("aten.linear.default", {x, b.constant({36, 64}, random_values(36 * 64, 7)), b.value(VkNull{}), u});
      if (up_first) b.call("aten.mul.Tensor", {u, m, h});
      else b.call("aten.mul.Tensor", {m, u, h});
      b.input(x);
      b.output(h);
      const std::string st_name = st == kBuf ? "buffer" : "texture3d";
      const std::string dual = "linear_gemv_dual_f32_" + st_name, silu = "silu_f32_" + st_name;
      SCOPED_TRACE(dual);
      const uint64_t before = gemv_dispatches(dual), silu_before = gemv_dispatches(silu);
      expect_same(b.build(), {random_f32({1, 2, 64}, 13)});
      EXPECT_EQ(gemv_dispatches(dual), before + 1);
      EXPECT_EQ(gemv_dispatches(silu), silu_before) << "the SiLU ran as its own dispatch";
    }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

TEST_F(VulkanOps, BatchNormAndUpsample) {
  VKC_REQUIRE_VULKAN();
  {
    VkProgramBuilder b;
    const int x = tensor(b, {1, 5, 3, 4}, kTex, kC), y = tensor(b, {1, 5, 3, 4}, kTex, kC);
    const int m = tensor(b, {0}, kTex, kC), r = tensor(b, {0}, kTex, kC);
    std::vector<float> var = random_values(5, 4);
    for (float& v : var) v = v * v + 0.1f;
    b.call("aten._native_batch_norm_legit_no_training.default",
           {x, b.constant({5}, random_values(5, 1)), b.value(VkNull{}), b.constant({5}, random_values(5, 3)),
            b.constant({5}, var), b.value(0.1), b.value(1e-5), b.value(VkValueList{{y, m, r}})});
    b.input(x);
    b.output(y);
    expect_same(b.build(), {random_f32({1, 5, 3, 4}, 13)});
  }
  for (bool bilinear : {false, true}) {
    VkProgramBuilder b;
    const int x = tensor(b, {1, 3, 3, 4}, kTex, kC), y = tensor(b, {1, 3, 6, 7}, kTex, kC);
    if (bilinear) b.call("aten.upsample_bilinear2d.vec", {x, b.value(VkIntList{{6, 7}}), b.value(false), b.value(VkNull{}), y});
    else b.call("aten.upsample_nearest2d.vec", {x, b.value(VkIntList{{6, 7}}), b.value(VkNull{}), y});
    b.input(x);
    b.output(y);
    SCOPED_TRACE(bilinear ? "bilinear" : "nearest");
    expect_same(b.build(), {random_f32({1, 3, 3, 4}, 14)});
  }
}

// native_layer_norm over the last dim, in each representation the registry allows (W packed
// spreads a row over texels, C/H packed vectorizes 4 rows), with and without weight and bias.
// Rows of 7 (one invocation per row), 40 (on a GPU: a workgroup per row, layer_norm_wg) and 1030
// (on a GPU: 256 invocations a row, layer_norm_wg256); VKC_VULKAN_GPU_KERNELS=1 makes lavapipe
// choose so.
TEST_F(VulkanOps, LayerNorm) {
  VKC_REQUIRE_VULKAN();
  struct Case { StorageType st; MemoryLayout ml; bool affine; };
  for (uint32_t width : {7u, 40u, 1030u}) {
    if (width >= 40) ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
    for (const Case& c : {Case{kTex, kW, true}, Case{kTex, kC, true}, Case{kTex, kH, false}, Case{kBuf, kW, true}}) {
      VkProgramBuilder b;
      const std::vector<uint32_t> dims{width > 1000 ? 1u : 2u, 3, 5, width};
      const int x = tensor(b, dims, c.st, c.ml), y = tensor(b, dims, c.st, c.ml);
      const int m = tensor(b, {dims[0], 3, 5, 1}, c.st, c.ml), r = tensor(b, {dims[0], 3, 5, 1}, c.st, c.ml);
      const int w = c.affine ? b.constant({width}, random_values(width, 21)) : b.value(VkNull{});
      const int bias = c.affine ? b.constant({width}, random_values(width, 22)) : b.value(VkNull{});
      b.call("aten.native_layer_norm.default",
             {x, b.value(VkIntList{{width}}), w, bias, b.value(1e-5), b.value(VkValueList{{y, m, r}})});
      b.input(x);
      b.output(y);
      SCOPED_TRACE(::testing::Message() << "width " << width << " storage " << static_cast<int>(c.st) << " layout "
                                      << static_cast<int>(c.ml));
      const std::string name = std::string(width > 1000 ? "layer_norm_wg256_f32_" : width == 40 ? "layer_norm_wg_f32_" : "layer_norm_f32_") +
                               (c.st == kBuf ? "buffer" : "texture3d");
      const uint64_t before = runtime::vulkan_variant_dispatches(name);
      expect_same(b.build(), {random_f32({dims[0], 3, 5, width}, 23, -3, 3)});
      EXPECT_GT(runtime::vulkan_variant_dispatches(name), before);
    }
  }
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

TEST_F(VulkanOps, DataMovement) {
  VKC_REQUIRE_VULKAN();
  VkProgramBuilder b;
  const int x = tensor(b, {2, 3, 4, 5}, kTex, kC);
  const int cl = tensor(b, {2, 3, 4, 5}, kTex, kW), pm = tensor(b, {5, 2, 4, 3}, kTex, kH);
  const int sl = tensor(b, {2, 3, 3, 5}, kBuf, kW), se = tensor(b, {2, 4, 5}, kTex, kC);
  const int ex = tensor(b, {2, 2, 4, 5}, kTex, kC), ct = tensor(b, {2, 6, 4, 5}, kTex, kC);
  const int pd = tensor(b, {2, 3, 5, 8}, kTex, kW), vw = tensor(b, {6, 20}, kTex, kW), vb = tensor(b, {6, 15}, kBuf, kW);
  const int s0 = tensor(b, {2, 1, 4, 5}, kTex, kC), s1 = tensor(b, {2, 2, 4, 5}, kTex, kC);
  const int sc = tensor(b, {2, 3, 5}, kBuf, kW), sv = tensor(b, {2, 3, 4, 5}, kBuf, kW);
  b.call("aten.clone.default", {x, b.value(VkNull{}), cl});
  b.call("aten.permute_copy.default", {cl, b.value(VkIntList{{3, 0, 2, 1}}), pm});
  b.call("aten.clone.default", {x, b.value(VkNull{}), sv});  // texture -> buffer
  b.call("aten.slice_copy.Tensor", {sv, b.value(int64_t{2}), b.value(int64_t{1}), b.value(int64_t{4}),
                                    b.value(int64_t{2}), tensor(b, {2, 3, 2, 5}, kBuf, kW)});
  b.call("aten.slice_copy.Tensor", {sv, b.value(int64_t{2}), b.value(int64_t{-3}), b.value(VkNull{}),
                                    b.value(int64_t{1}), sl});
  b.call("aten.select_copy.int", {x, b.value(int64_t{1}), b.value(int64_t{-1}), se});
  b.call("aten.split_with_sizes_copy.default", {x, b.value(VkIntList{{1, 2}}), b.value(int64_t{1}),
                                                b.value(VkValueList{{s0, s1}})});
  b.call("aten.expand_copy.default", {s0, b.value(VkIntList{{2, 2, 4, 5}}), b.value(false), ex});
  b.call("aten.cat.default", {b.value(VkValueList{{x, s1, s0}}), b.value(int64_t{1}), ct});
  b.call("aten.constant_pad_nd.default", {cl, b.value(VkIntList{{2, 1, 0, 1}}), b.value(0.5), pd});
  b.call("aten.view_copy.default", {cl, b.value(VkIntList{{6, 20}}), vw});
  b.call("aten.view_copy.default", {sl, b.value(VkIntList{{6, -1}}), vb});
  b.call("aten.select_copy.int", {sl, b.value(int64_t{2}), b.value(int64_t{0}), sc});
  b.input(x);
  for (int o : {cl, pm, sl, se, ex, ct, pd, vw, vb, sc}) b.output(o);
  expect_same(b.build(), {random_f32({2, 3, 4, 5}, 15)}, 0, 0);
}

// copy.glsl's shortcuts: a texture output dispatches only its region's texels and moves whole
// texels when the input's 4 lanes line up (channel offsets 0, 4, 12 here, batch folded into
// depth; 2 and 6 do not line up); an identity copy from a texture to a buffer reads each texel once.
TEST_F(VulkanOps, CopiesMoveWholeTexelsWhereTheyLineUp) {
  VKC_REQUIRE_VULKAN();
  VkProgramBuilder b;
  const int a = tensor(b, {2, 4, 3, 5}, kTex, kC), c = tensor(b, {2, 8, 3, 5}, kTex, kC);
  const int d = tensor(b, {2, 3, 3, 5}, kTex, kC), ct = tensor(b, {2, 15, 3, 5}, kTex, kC);
  const int s4 = tensor(b, {2, 8, 3, 5}, kTex, kC), s2 = tensor(b, {2, 6, 3, 5}, kTex, kC);
  const int ctw = tensor(b, {2, 15, 3, 5}, kTex, kW), tb = tensor(b, {2, 15, 3, 5}, kBuf, kW);
  const int mixed = tensor(b, {2, 13, 3, 5}, kTex, kC);
  b.call("aten.cat.default", {b.value(VkValueList{{a, c, d}}), b.value(int64_t{1}), ct});
  b.call("aten.slice_copy.Tensor", {ct, b.value(int64_t{1}), b.value(int64_t{4}), b.value(int64_t{12}),
                                    b.value(int64_t{1}), s4});
  b.call("aten.slice_copy.Tensor", {ct, b.value(int64_t{1}), b.value(int64_t{2}), b.value(int64_t{8}),
                                    b.value(int64_t{1}), s2});
  b.call("aten.clone.default", {ct, b.value(VkNull{}), ctw});
  b.call("aten.clone.default", {ct, b.value(VkNull{}), tb});  // texture -> buffer, identity
  b.call("aten.cat.default", {b.value(VkValueList{{s2, d, a}}), b.value(int64_t{1}), mixed});  // offsets 6, 9
  for (int x : {a, c, d}) b.input(x);
  for (int o : {ct, s4, s2, ctw, tb, mixed}) b.output(o);
  expect_same(b.build(), {random_f32({2, 4, 3, 5}, 21), random_f32({2, 8, 3, 5}, 22), random_f32({2, 3, 3, 5}, 23)}, 0, 0);
}

// Load-time epilogue fusion: a relu / clamp right after a float binary op, mul(x, sigmoid(x)), and a
// clone of a view run as one dispatch where the first output has no other reader (the program is unchanged); a
// value that is also read elsewhere or is an output keeps its own dispatch. An input planned into
// the fused output's memory (same shape: read and written element by element) does not stop it.
TEST_F(VulkanOps, ElementwiseEpiloguesAreFusedAtLoad) {
  VKC_REQUIRE_VULKAN();
  VkProgramBuilder b;
  const std::vector<uint32_t> d{1, 6, 5, 7};
  const int x = tensor(b, d, kTex, kC), y = tensor(b, d, kTex, kC);
  const auto t = [&] { return tensor(b, d, kTex, kC); };
  const auto in_memory = [&](int32_t mem) {
    serializer::VkTensor v;
    v.dims = d;
    v.storage = kTex;
    v.layout = kC;
    v.mem_obj_id = mem;
    return b.value(v);
  };
  const int s = t(), r = t(), df = t(), c = t(), m = t(), c2 = t(), sg = t(), silu = t(), sg2 = t(), silu2 = t();
  const int e = t(), re = t(), n = in_memory(0), a2 = t(), r2 = in_memory(0);
  const int alpha = b.value(int64_t{1}), none = b.value(VkNull{});
  b.call("aten.add.Tensor", {x, y, alpha, s});
  b.call("aten.relu.default", {s, r});
  b.call("aten.sub.Tensor", {x, y, alpha, df});
  b.call("aten.clamp.default", {df, b.value(-0.3), b.value(0.4), c});
  b.call("aten.mul.Tensor", {x, y, m});
  b.call("aten.clamp.default", {m, none, b.value(0.2), c2});
  b.call("aten.sigmoid.default", {x, sg});
  b.call("aten.mul.Tensor", {x, sg, silu});
  b.call("aten.sigmoid.default", {y, sg2});
  b.call("aten.mul.Tensor", {sg2, y, silu2});
  b.call("aten.add.Tensor", {x, y, alpha, e});  // e is an output too: not fused
  b.call("aten.relu.default", {e, re});
  b.call("aten.neg.default", {x, n});  // n and r2 share memory object 0 (same shape): fused in place
  b.call("aten.add.Tensor", {n, y, alpha, a2});
  b.call("aten.relu.default", {a2, r2});
  // A view whose only reader is a clone to another layout: one view dispatch.
  const int vw = tensor(b, {6, 35}, kTex, kC), cl = tensor(b, {6, 35}, kTex, kW);
  b.call("aten.view_copy.default", {x, b.value(VkIntList{{6, 35}}), vw});
  b.call("aten.clone.default", {vw, none, cl});
  b.input(x);
  b.input(y);
  for (int o : {r, c, c2, silu, silu2, e, re, r2, cl}) b.output(o);
  const auto count = [](const char* v) { return runtime::vulkan_variant_dispatches(v); };
  const uint64_t relu = count("relu_f32_texture3d"), clamp = count("clamp_f32_texture3d");
  const uint64_t sigmoid = count("sigmoid_f32_texture3d"), fused = count("silu_f32_texture3d");
  const uint64_t copies = count("copy_f32_texture3d_texture3d"), views = count("view_f32_texture3d");
  expect_same(b.build(), {random_f32({1, 6, 5, 7}, 31, -2, 2), random_f32({1, 6, 5, 7}, 32, -2, 2)});
  EXPECT_EQ(count("relu_f32_texture3d") - relu, 1u);  // e's
  EXPECT_EQ(count("clamp_f32_texture3d") - clamp, 0u);
  EXPECT_EQ(count("sigmoid_f32_texture3d") - sigmoid, 0u);
  EXPECT_EQ(count("silu_f32_texture3d") - fused, 2u);
  EXPECT_EQ(count("view_f32_texture3d") - views, 1u);
  EXPECT_EQ(count("copy_f32_texture3d_texture3d") - copies, 0u);
}

// A cat of two textures in the output's packing is one dispatch (cat2.glsl): along the packed
// channels at an aligned (4) and an unaligned (6) split, batch folded into depth, and along W.
TEST_F(VulkanOps, CatOfTwoTexturesIsOneDispatch) {
  VKC_REQUIRE_VULKAN();
  VkProgramBuilder b;
  const int a = tensor(b, {2, 4, 3, 5}, kTex, kC), c = tensor(b, {2, 6, 3, 5}, kTex, kC), d = tensor(b, {2, 3, 3, 5}, kTex, kC);
  const int ac = tensor(b, {2, 10, 3, 5}, kTex, kC), cd = tensor(b, {2, 9, 3, 5}, kTex, kC);
  const int w1 = tensor(b, {2, 4, 3, 7}, kTex, kC), aw = tensor(b, {2, 4, 3, 12}, kTex, kC);
  b.call("aten.cat.default", {b.value(VkValueList{{a, c}}), b.value(int64_t{1}), ac});
  b.call("aten.cat.default", {b.value(VkValueList{{c, d}}), b.value(int64_t{1}), cd});
  b.call("aten.cat.default", {b.value(VkValueList{{a, w1}}), b.value(int64_t{3}), aw});
  for (int x : {a, c, d, w1}) b.input(x);
  for (int o : {ac, cd, aw}) b.output(o);
  const uint64_t before = runtime::vulkan_variant_dispatches("cat2_f32");
  expect_same(b.build(), {random_f32({2, 4, 3, 5}, 41), random_f32({2, 6, 3, 5}, 42), random_f32({2, 3, 3, 5}, 43),
                          random_f32({2, 4, 3, 7}, 44)},
              0, 0);
  EXPECT_EQ(runtime::vulkan_variant_dispatches("cat2_f32") - before, 3u);
}

// Rank 5-8 buffers split along a leading dim (mobilevit's unfolded patches): slices through copy_nd.
TEST_F(VulkanOps, SplitsRankFiveBuffersAlongLeadingDims) {
  VKC_REQUIRE_VULKAN();
  for (int64_t dim : {0, 1, -5}) {
    VkProgramBuilder b;
    const std::vector<uint32_t> in{3, 5, 2, 3, 4};
    std::vector<uint32_t> d0 = in, d1 = in;
    const size_t d = dim < 0 ? static_cast<size_t>(dim + 5) : static_cast<size_t>(dim);
    d0[d] = 1;
    d1[d] = in[d] - 1;
    const int x = tensor(b, in, kBuf, kW), a = tensor(b, d0, kBuf, kW), c = tensor(b, d1, kBuf, kW);
    b.call("aten.split_with_sizes_copy.default", {x, b.value(VkIntList{{1, static_cast<int64_t>(in[d]) - 1}}),
                                                  b.value(dim), b.value(VkValueList{{a, c}})});
    b.input(x);
    b.output(a);
    b.output(c);
    SCOPED_TRACE(dim);
    expect_same(b.build(), {random_f32({3, 5, 2, 3, 4}, 21)}, 0, 0);
  }
}

// Barriers go only where a dispatch depends on an earlier one, and memory-plan aliasing counts:
//   0 copy (staging -> x)   1 relu(x) -> a [obj 0]  barrier 1 (reads x)
//   2 sigmoid(x) -> b       none (independent of 1)
//   3 neg(a) -> c           barrier 2 (reads a)
//   4 exp(b) -> d [obj 0]   barrier 3: d overwrites a's memory, which 3 reads (a handle-based
//                           tracker would miss this and race)
//   5 copy c -> staging     none      6 copy d -> staging  barrier 4 (reads d)
TEST_F(VulkanOps, BarriersOnlyBetweenDependentDispatches) {
  VKC_REQUIRE_VULKAN();
  VkProgramBuilder b;
  auto planned = [&](int obj) {
    serializer::VkTensor t;
    t.dtype = V::Float32;
    t.dims = {2, 3, 4, 5};
    t.storage = kBuf;
    t.layout = kW;
    t.mem_obj_id = obj;
    return b.value(t);
  };
  const int x = planned(-1), a = planned(0), bb = planned(1), c = planned(2), d = planned(0);
  b.call("aten.relu.default", {x, a});
  b.call("aten.sigmoid.default", {x, bb});
  b.call("aten.neg.default", {a, c});
  b.call("aten.exp.default", {bb, d});
  b.input(x);
  b.output(c);
  b.output(d);
  const uint64_t before = runtime::vulkan_recorded_barriers();
  expect_same(b.build(), {random_f32({2, 3, 4, 5}, 41)});
  EXPECT_EQ(runtime::vulkan_recorded_barriers() - before, 4u);
}

// Chained dispatches (VKC_VULKAN_CHAIN=1: a dispatch waits on a counter the one before raises,
// not at a barrier): y = linear(x) and z = linear(y) chain; relu(y) runs after them and does not
// depend on z's linear, but reads what the chain wrote, so it syncs: a barrier before it, as many
// barriers as without chains (the chain's wait stands for the one it replaced). Outputs as the
// cpu's. VKC_VULKAN_CHAIN as a list of names chains the twins of the variants named: the linears'
// (`linear_gemv`) chain, a name no variant has chains nothing.
TEST_F(VulkanOps, ADispatchAfterAChainSyncsWithWhatTheChainWrote) {
  VKC_REQUIRE_VULKAN();
  if (!runtime::vulkan_subgroup_arithmetic()) GTEST_SKIP() << "no subgroup arithmetic (the chained kernels' family)";
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  const std::vector<std::pair<std::string, uint64_t>> modes = {
      {"0", 0}, {"1", 1}, {"relu,linear_gemv", 1}, {"linear_q4,relu", 0}};
  uint64_t unchained_barriers = 0;
  for (const auto& [chain, expected] : modes) {
    ::setenv("VKC_VULKAN_CHAIN", chain.c_str(), 1);
    VkProgramBuilder b;
    const int x = tensor(b, {1, 72}, kTex, kW), y = tensor(b, {1, 72}, kTex, kW), z = tensor(b, {1, 9}, kTex, kW);
    const int r = tensor(b, {1, 72}, kTex, kW);
    b.call("aten.linear.default", {x, b.constant({72, 72}, random_values(72 * 72, 5)), b.value(VkNull{}), y});
    b.call("aten.linear.default", {y, b.constant({9, 72}, random_values(9 * 72, 6)), b.value(VkNull{}), z});
    b.call("aten.relu.default", {y, r});
    b.input(x);
    b.output(z);
    b.output(r);
    const uint64_t b0 = runtime::vulkan_recorded_barriers(), c0 = runtime::vulkan_recorded_chains();
    SCOPED_TRACE("VKC_VULKAN_CHAIN=" + chain);
    expect_same(b.build(), {random_f32({1, 72}, 17)});
    const uint64_t barriers = runtime::vulkan_recorded_barriers() - b0;
    if (chain == "0") unchained_barriers = barriers;
    EXPECT_EQ(runtime::vulkan_recorded_chains() - c0, expected);
    EXPECT_EQ(barriers, unchained_barriers);
  }
  ::unsetenv("VKC_VULKAN_CHAIN");
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

// A chained wait that never sees its count (VKC_VULKAN_CHAIN_UNREACHABLE=1: one workgroup more
// asked for than there are, as where a device launched the next dispatch's workgroups first) polls
// to its bound and goes on; the run then fails with one error naming VKC_VULKAN_CHAIN=0, and the
// same program without chains runs.
TEST_F(VulkanOps, AChainedWaitPastItsBoundFailsTheRun) {
  VKC_REQUIRE_VULKAN();
  if (!runtime::vulkan_subgroup_arithmetic()) GTEST_SKIP() << "no subgroup arithmetic (the chained kernels' family)";
  ::setenv("VKC_VULKAN_GPU_KERNELS", "1", 1);
  VkProgramBuilder b;
  const int x = tensor(b, {1, 72}, kTex, kW), y = tensor(b, {1, 72}, kTex, kW), z = tensor(b, {1, 9}, kTex, kW);
  b.call("aten.linear.default", {x, b.constant({72, 72}, random_values(72 * 72, 5)), b.value(VkNull{}), y});
  b.call("aten.linear.default", {y, b.constant({9, 72}, random_values(9 * 72, 6)), b.value(VkNull{}), z});
  b.input(x);
  b.output(z);
  const serializer::PteFile pte = b.build();
  const std::vector<HostTensor> in = {random_f32({1, 72}, 17)};
  ::setenv("VKC_VULKAN_CHAIN", "1", 1);
  ::setenv("VKC_VULKAN_CHAIN_UNREACHABLE", "1", 1);
  const std::string error = vkc::testing::error_of<runtime::RuntimeError>(
      [&] { runtime::Executor::from_pte(pte, *vulkan()).run(in); });
  ::unsetenv("VKC_VULKAN_CHAIN_UNREACHABLE");
  EXPECT_THAT(error, ::testing::HasSubstr("a chained dispatch waited past its bound"));
  EXPECT_THAT(error, ::testing::HasSubstr("VKC_VULKAN_CHAIN=0"));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  ::setenv("VKC_VULKAN_CHAIN", "0", 1);
  expect_same(pte, in);
  ::unsetenv("VKC_VULKAN_CHAIN");
  ::unsetenv("VKC_VULKAN_GPU_KERNELS");
}

TEST_F(VulkanOps, PrepackedConstantsAndFp16) {
  VKC_REQUIRE_VULKAN();
  VkProgramBuilder b;
  const int x = tensor(b, {1, 4, 3, 3}, kTex, kC, V::Float16), c = tensor(b, {1, 4, 3, 3}, kTex, kC, V::Float16);
  const int y = tensor(b, {1, 4, 3, 3}, kTex, kC, V::Float16), z = tensor(b, {1, 4, 3, 3}, kTex, kC, V::Float16);
  b.call("et_vk.prepack.default", {b.constant({1, 4, 3, 3}, random_values(36, 2)), c});
  b.call("aten.add.Tensor", {x, c, b.value(int64_t{1}), y});
  b.call("aten.convolution.default", {y, b.constant({4, 4, 1, 1}, random_values(16, 3)), b.value(VkNull{}),
                                      b.value(VkIntList{{1, 1}}), b.value(VkIntList{{0, 0}}), b.value(VkIntList{{1, 1}}),
                                      b.value(false), b.value(VkIntList{{0, 0}}), b.value(int64_t{1}), z});
  b.input(x);
  b.output(z);
  expect_same(b.build(), {random_f32({1, 4, 3, 3}, 16)}, 1e-2, 2e-3);
}

TEST(VulkanBackend, CoversEveryRegistryOperator) {
  const auto ops = runtime::vulkan_operators();
  for (const auto& def : ir::all_ops())
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), def.name())) << def.name() << " has no Vulkan encoder";
}

TEST_F(VulkanOps, UnsupportedOperatorIsOneErrorNamingNodeAndOp) {
  VKC_REQUIRE_VULKAN();
  VkProgramBuilder b;
  const int x = tensor(b, {2, 2}, kTex, kW), out = tensor(b, {2, 2}, kTex, kW);
  b.call("aten.not_an_operator.default", {x, out});  // every registry operator has a kernel
  b.input(x);
  b.output(out);
  try {
    runtime::Executor::from_pte(b.build(), *vulkan());
    FAIL() << "expected an error";
  } catch (const runtime::RuntimeError& e) {
    EXPECT_THAT(e.what(), ::testing::EndsWith("node 0 (aten.not_an_operator.default): operator has no Vulkan kernel in this backend"));
  }
  VkProgramBuilder d;  // a variant that does not exist: div on i32
  const int i = tensor(d, {3}, kBuf, kW, V::Int32), o = tensor(d, {3}, kBuf, kW, V::Int32);
  d.call("aten.div.Tensor", {i, i, o});
  d.input(i, serializer::ScalarType::Int);
  d.output(o, serializer::ScalarType::Int);
  try {
    runtime::Executor::from_pte(d.build(), *vulkan());
    FAIL() << "expected an error";
  } catch (const runtime::RuntimeError& e) {
    EXPECT_THAT(e.what(), ::testing::EndsWith(
                              "node 0 (aten.div.Tensor): no shader variant for aten.div.Tensor i32 buffer width_packed"));
  }
}

// fp16 tensors hold the nearest fp16 value (ties to even), as the cpu backend's fp16 does:
// lavapipe and NVIDIA convert rgba16f stores toward zero, which biased every fp16 layer.
// x * 0.75 is exact in fp32 and needs 13 bits, so it rounds on the store: any other rounding
// (and the input conversion too) shows as a mismatch; exact equality is required. Inputs of three
// magnitudes: normal fp16 values, those about the smallest normal one (2^-14, 6.1e-5) and those
// among the subnormal ones (steps of 2^-24, 6e-8; exact ties among their products).
// fp32 inputs into fp16 tensors (and the results back) convert on the GPU, in the staging copies,
// rounding as the cpu backend does: the two agree exactly.
TEST_F(VulkanOps, Fp16TensorsRoundToNearestEven) {
  VKC_REQUIRE_VULKAN();
  auto staged = [](const char* dir) {
    return runtime::vulkan_variant_dispatches(std::string("stage_") + dir + "_f32_f16_buffer") +
           runtime::vulkan_variant_dispatches(std::string("stage_") + dir + "_f32_f16_texture3d");
  };
  const uint64_t in0 = staged("in"), out0 = staged("out");
  for (auto [st, ml] : {std::pair{kTex, kW}, std::pair{kTex, kC}, std::pair{kBuf, kW}}) {
    VkProgramBuilder b;
    const std::vector<uint32_t> dims{1, 4, 8, 8};
    const int x = tensor(b, dims, st, ml, V::Float16), k = tensor(b, dims, st, ml, V::Float16),
              y = tensor(b, dims, st, ml, V::Float16);
    b.call("aten.mul.Tensor", {x, k, y});
    b.input(x);
    b.input(k);
    b.output(y);
    SCOPED_TRACE(::testing::Message() << "storage " << static_cast<int>(st) << " layout " << static_cast<int>(ml));
    HostTensor three_quarters = HostTensor::of(ir::DType::Float32, {1, 4, 8, 8}, std::vector<float>(256, 0.75f));
    const auto program = b.build();
    for (float range : {100.0f, 1e-4f, 2e-6f}) {
      SCOPED_TRACE(::testing::Message() << "inputs in +-" << range);
      expect_same(program, {random_f32({1, 4, 8, 8}, 31, -range, range), three_quarters}, 0, 0);
    }
  }
  EXPECT_EQ(staged("in") - in0, 18u);  // two inputs of three programs, three times
  EXPECT_EQ(staged("out") - out0, 9u);
}

// A payload's embedded SPIR-V is used in place of the library's code for the variant of the
// same name: embedding sigmoid's code under relu's variant name makes relu compute sigmoid.
TEST_F(VulkanOps, EmbeddedSpirvIsUsedBeforeTheLibrary) {
  VKC_REQUIRE_VULKAN();
  const auto bytes = shaders::embedded_bundle();
  const codegen::ShaderLibrary lib =
      codegen::ShaderLibrary::from_bytes(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  auto find = [&](const char* op) {
    codegen::ShaderLibrary::Query q;
    q.op = op;
    q.dtype = "f32";
    q.storage = "buffer";
    q.layout = "width_packed";
    const auto all = lib.find_all(q);
    EXPECT_FALSE(all.empty()) << op;
    return all.empty() ? nullptr : all.front();
  };
  const codegen::LibraryVariant* relu = find("aten.relu.default");
  const codegen::LibraryVariant* sigmoid = find("aten.sigmoid.default");
  ASSERT_TRUE(relu && sigmoid);
  ASSERT_EQ(relu->template_name, sigmoid->template_name);  // same bindings and push constants
  auto program = [&](bool embed) {
    VkProgramBuilder b;
    const int x = tensor(b, {4}, kBuf, kW), out = tensor(b, {4}, kBuf, kW);
    b.call("aten.relu.default", {x, out});
    b.input(x);
    b.output(out);
    if (embed) b.embed_shader(relu->name, sigmoid->spirv);
    return b.build();
  };
  const HostTensor x = HostTensor::of(ir::DType::Float32, {4}, std::vector<float>{-2.f, -0.5f, 0.f, 3.f});
  runtime::Executor plain = runtime::Executor::from_pte(program(false), *vulkan());
  runtime::Executor swapped = runtime::Executor::from_pte(program(true), *vulkan());
  const HostTensor r = plain.run({x}).at(0), s = swapped.run({x}).at(0);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(r.get_f(i), std::max(0.0, x.get_f(i))) << i;
    EXPECT_NEAR(s.get_f(i), 1.0 / (1.0 + std::exp(-x.get_f(i))), 1e-6) << i;
  }
}

// A tensor past the device's maxStorageBufferRange (lavapipe: 128 MiB) is refused at load,
// naming the limit, instead of reading zeros past it.
TEST_F(VulkanOps, TensorsPastTheStorageBufferRangeAreRefused) {
  VKC_REQUIRE_VULKAN();
  const uint32_t n = (1u << 25) + 1;  // 128 MiB + 4 bytes of f32
  VkProgramBuilder b;
  const int x = tensor(b, {n}, kBuf, kW), out = tensor(b, {n}, kBuf, kW);
  b.call("aten.relu.default", {x, out});
  b.input(x);
  b.output(out);
  try {
    runtime::Executor::from_pte(b.build(), *vulkan());
    if (runtime::vulkan_device_name().find("llvmpipe") != std::string::npos) FAIL() << "expected an error on lavapipe";
  } catch (const runtime::RuntimeError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("a tensor of 134217732 bytes exceeds this device's maxStorageBufferRange ("));
  }
}

}  // namespace
}  // namespace vkc::test
