#include "vk_delegate.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "../cpu/cpu_dtypes.h"
#include "vkc/kernels/elementwise.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::runtime {
namespace {
std::mutex g_variant_mutex;
std::map<std::string, uint64_t, std::less<>> g_variant_dispatches;
}  // namespace

std::atomic<uint64_t> g_recorded_barriers{0};
uint64_t vulkan_recorded_barriers() { return g_recorded_barriers.load(); }

uint64_t vulkan_variant_dispatches(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_variant_mutex);
  auto it = g_variant_dispatches.find(name);
  return it == g_variant_dispatches.end() ? 0 : it->second;
}

}  // namespace vkc::runtime

namespace vkc::runtime::vk {

using kernels::HostTensor;
using serializer::VkTensor;

namespace {

VkFormat texel_format(ir::DType t) {
  switch (t) {
    case ir::DType::Float32: return VK_FORMAT_R32G32B32A32_SFLOAT;
    case ir::DType::Float16: return VK_FORMAT_R16G16B16A16_SFLOAT;
    case ir::DType::Int32: return VK_FORMAT_R32G32B32A32_SINT;
    default: return VK_FORMAT_UNDEFINED;
  }
}

std::vector<int64_t> dims_of(const VkTensor& t) { return {t.dims.begin(), t.dims.end()}; }

}  // namespace

VulkanDelegate::VulkanDelegate(std::shared_ptr<Device> device, const serializer::BackendDelegate& d,
                               const NamedDataMap& named, std::shared_ptr<SharedDelegateState>* shared)
    : dev_(std::move(device)), named_(named) {
  if (shared && *shared) {
    common_ = std::dynamic_pointer_cast<DelegateShared>(*shared);
    if (!common_) throw RuntimeError("a delegate's instances are shared across backends");
  } else {
    common_ = std::make_shared<DelegateShared>();
    if (shared) *shared = common_;
  }
  serializer::VkPayload payload = serializer::read_vk_payload(d.processed.bytes());
  graph_ = std::move(payload.graph);
  payload_bytes_ = payload.bytes;
  for (const serializer::VkBytes& s : graph_.shaders) {
    if (s.offset > payload_bytes_.size() || s.length > payload_bytes_.size() - s.offset || s.length % 4 != 0 ||
        s.length < 20)
      throw RuntimeError(fmt::format("embedded shader {}: its SPIR-V lies outside the payload", s.named_key));
    embedded_spirv_[s.named_key] = payload_bytes_.subspan(s.offset, s.length);
  }
  Encoder::graph_ = &graph_;
  set_symints(&encoded_symints);
  tensors_.resize(graph_.values.size());
  serializer::VkOperatorCall planning_call{kStagingNode, "memory objects", {}};
  call_ = &planning_call;
  bind_memory_objects();

  // Inputs: host staging buffer -> tensor (copy.glsl), first in the recorded command buffer; not
  // for an input that only select_as_symint reads (it reads the staging buffer: a decode step's
  // input_pos once the attention and the rotary take it as their start_pos).
  serializer::VkOperatorCall staging_call{kStagingNode, "staging", {}};
  call_ = &staging_call;
  for (size_t i = 0; i < graph_.input_ids.size(); ++i) {
    staging_call.name = fmt::format("input {}", i);
    const int32_t id = static_cast<int32_t>(graph_.input_ids[i]);
    GpuTensor& t = tensor_id(id);
    if (t.int8x4) fail("an int8 activation (packed int8 layout) cannot be a delegate input");
    in_stage_.push_back(staging(t, Context::Mem::Upload));
    const size_t first = run_.size();
    if (read_by_kernels(id)) encode_staging_copy(*this, t, *in_stage_.back());
    input_copies_.emplace_back(first, run_.size());
  }
  const auto& ops = vulkan_ops();
  // Argument slots naming each value (value lists included), for sole_next's fusions.
  for (const auto& c : graph_.chain)
    for (int32_t a : c.args) {
      ++uses_[a];
      if (a >= 0 && static_cast<size_t>(a) < graph_.values.size())
        if (const auto* list = std::get_if<serializer::VkValueList>(&graph_.values[a]))
          for (int32_t item : list->items) ++uses_[item];
    }
  for (uint32_t o : graph_.output_ids) graph_outputs_.insert(static_cast<int32_t>(o));
  for (size_t k = 0; k < graph_.chain.size(); ++k) {
    const auto& c = graph_.chain[k];
    call_ = &c;
    next_call_ = k + 1 < graph_.chain.size() ? &graph_.chain[k + 1] : nullptr;
    after_next_call_ = k + 2 < graph_.chain.size() ? &graph_.chain[k + 2] : nullptr;
    absorbed_ = 0;
    auto it = ops.find(c.name);
    if (it == ops.end()) fail("operator has no Vulkan kernel in this backend");
    prepacking_ = c.name == "et_vk.prepack.default";
    it->second(*this);
    prepacking_ = false;
    k += static_cast<size_t>(absorbed_);  // the next call(s) ran inside this one's dispatch
  }
  next_call_ = after_next_call_ = nullptr;
  step_end_ = run_.size();
  // VKC_VULKAN_STAGED_READBACK=1 / 0 forces the readback through device memory on / off.
  const char* staged_env = std::getenv("VKC_VULKAN_STAGED_READBACK");
  const bool discrete = staged_env && *staged_env
                            ? std::string_view(staged_env) == "1"
                            : dev_->ctx->properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  for (size_t j = 0; j < graph_.output_ids.size(); ++j) {
    staging_call.name = fmt::format("output {}", j);
    call_ = &staging_call;
    GpuTensor& t = tensor_id(static_cast<int32_t>(graph_.output_ids[j]));
    if (t.int8x4) fail("an int8 activation (packed int8 layout) cannot be a delegate output");
    out_stage_.push_back(staging(t, Context::Mem::Readback));
    if (!discrete) {
      encode_staging_copy(*this, *out_stage_.back(), t);
      continue;
    }
    // On a discrete GPU the output is staged in device memory and copied across the bus in one
    // transfer (a shader writing host memory crosses it a few bytes at a time: the fp32 logits of
    // a 32000-token vocabulary took 72 us of a 2.5 ms decode step on an H100).
    out_device_.push_back(staging(t, Context::Mem::Device));
    encode_staging_copy(*this, *out_device_.back(), t);
    readback_.push_back({out_device_.back()->buffer.buffer, out_stage_.back()->buffer.buffer,
                         static_cast<VkDeviceSize>(HostTensor{out_stage_.back()->dtype, t.dims, {}}.numel()) *
                             ir::dtype_size(out_stage_.back()->dtype)});
  }
  call_ = nullptr;

  std::vector<VkImage> images;
  auto add_images = [&](const auto& container) {
    for (const auto& entry : container) {
      const GpuTensor* t = nullptr;
      if constexpr (requires { entry.second; }) t = entry.second.get();
      else t = entry.get();
      if (t && t->texture) images.push_back(t->image.image);
    }
  };
  add_images(tensors_), add_images(scratch_);
  std::vector<VkImage> mine = std::move(images);
  images.clear();
  add_images(common_->materialized), add_images(common_->persistent);  // only those new in this instance
  for (VkImage im : images)
    if (common_->prepared.insert(im).second) mine.push_back(im);
  images = std::move(mine);
  Recording(dev_->ctx, *dev_->pipelines, prepack_, images).run();
  if (const char* env = std::getenv("VKC_VULKAN_MEMORY"); env && std::string_view(env) == "1")
    fmt::print(stderr, "vulkan delegate: {} memory object(s) shared; tensors use {} bytes ({} without sharing)\n",
               shared_.size(), device_bytes_, unshared_bytes_);
  const char* profile = std::getenv("VKC_VULKAN_PROFILE");
  const char* full = std::getenv("VKC_VULKAN_FULL_BARRIERS");
  // VKC_VULKAN_PROFILE=1: each dispatch's GPU time (a barrier after each); =run: the whole run's
  // GPU time beside the host's wall time, barriers as they are.
  const Profile prof = !profile                          ? Profile::Off
                       : std::string_view(profile) == "1"   ? Profile::Dispatch
                       : std::string_view(profile) == "run" ? Profile::Run
                                                            : Profile::Off;
  recording_ = std::make_unique<Recording>(dev_->ctx, *dev_->pipelines, run_, std::vector<VkImage>{}, prof,
                                           full && std::string_view(full) == "1", readback_);
  g_recorded_barriers += recording_->barriers();
  if (const char* env = std::getenv("VKC_VULKAN_MEMORY"); env && std::string_view(env) == "1")
    fmt::print(stderr, "vulkan delegate: {} dispatches, {} barriers between them\n", run_.size(), recording_->barriers());
}

VulkanDelegate::~VulkanDelegate() = default;

void VulkanDelegate::execute(std::span<HostTensor* const> args) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n_in = graph_.input_ids.size(), n_out = graph_.output_ids.size();
  if (args.size() != n_in + n_out)
    throw RuntimeError(fmt::format("{} args for {} inputs and {} outputs", args.size(), n_in, n_out));
  for (size_t i = 0; i < n_in; ++i) stage_input(i, *args[i]);
  recording_->run();
  for (size_t j = 0; j < n_out; ++j) {
    const GpuTensor& s = *out_stage_[j];
    HostTensor got = HostTensor::zeros(s.dtype, s.dims);
    std::memcpy(got.mutable_bytes(), s.buffer.mapped, got.data.size());
    HostTensor& dst = *args[n_in + j];
    if (got.numel() != HostTensor{dst.dtype, dst.shape, {}}.numel())
      throw RuntimeError(fmt::format("output {}: {} elements for a plan tensor of [{}]", j, got.numel(),
                                     fmt::join(dst.shape, ",")));
    HostTensor out = got.dtype == dst.dtype ? got : kernels::cast(got, dst.dtype);
    dst = HostTensor{dst.dtype, dst.shape, out.data};
  }
  recording_->add_execute_ns(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
}

void VulkanDelegate::stage_input(size_t i, const HostTensor& x) {
  const GpuTensor& s = *in_stage_[i];
  if (x.numel() != HostTensor{x.dtype, s.dims, {}}.numel() || x.shape.size() != s.dims.size())
    throw RuntimeError(fmt::format("input {}: [{}] does not match the delegate's [{}]", i, fmt::join(x.shape, ","),
                                   fmt::join(s.dims, ",")));
  const HostTensor g = x.dtype == s.dtype ? x : kernels::cast(x, s.dtype);
  std::memcpy(s.buffer.mapped, g.data.data(), g.data.size());
}

DecodeLoop* VulkanDelegate::decode_loop(const DecodeLoopSpec& spec) {
  const size_t batch = VulkanDecodeLoop::batch_from_env();
  if (batch == 0 || !VulkanDecodeLoop::profile_allows()) return nullptr;
  const auto key = std::make_tuple(spec.tokens, spec.position, spec.logits, spec.vocab, batch);
  if (loop_ && loop_key_ == key) return loop_.get();
  const size_t n_in = graph_.input_ids.size();
  if (spec.tokens >= n_in || spec.position >= n_in || spec.tokens == spec.position ||
      spec.logits >= graph_.output_ids.size())
    return nullptr;
  const GpuTensor &tok = *in_stage_[spec.tokens], &pos = *in_stage_[spec.position];
  const auto one_int = [](const GpuTensor& t) {
    return (t.dtype == ir::DType::Int32 || t.dtype == ir::DType::Int64) && HostTensor{t.dtype, t.dims, {}}.numel() == 1;
  };
  if (!one_int(tok) || !one_int(pos)) return nullptr;
  GpuTensor& logits = tensor_id(static_cast<int32_t>(graph_.output_ids[spec.logits]));
  if ((logits.dtype != ir::DType::Float16 && logits.dtype != ir::DType::Float32) || logits.int8x4 ||
      (logits.texture && logits.packed_dim != 0) || logits.dims.empty() || logits.dims.back() <= 0)
    return nullptr;
  const int64_t width = logits.dims.back();
  if (HostTensor{logits.dtype, logits.dims, {}}.numel() != width) return nullptr;  // one row
  const codegen::LibraryVariant* v = find_variant(logits, {}, "greedy_token", "aten.argmax.default");
  if (!v) return nullptr;
  constexpr size_t kPerBatch = 4;  // the token ring holds 4 batches (two in flight, one being read)
  const size_t capacity = kPerBatch * batch;
  Buffer state = dev_->ctx->make_buffer((1 + capacity) * sizeof(int32_t), Context::Mem::Readback);
  Push p(*v);
  p.iv("sizes", logits.sizes).i("row", 0).i("vocab", static_cast<int32_t>(spec.vocab > 0 ? std::min(spec.vocab, width) : width));
  p.i("capacity", static_cast<int32_t>(capacity));
  p.i("token_words", tok.dtype == ir::DType::Int64 ? 2 : 1).i("pos_words", pos.dtype == ir::DType::Int64 ? 2 : 1);
  // An input other than the token and the position whose memory no dispatch of the step writes
  // (a context input: an encoder-decoder's cross-attention keys and values) keeps its value across
  // the steps: it is copied from its staging buffer once a run (the loop's prologue), not every step.
  std::vector<bool> once(step_end_, false);
  for (size_t i = 0; i < n_in; ++i) {
    const auto [first, last] = input_copies_[i];
    if (i == spec.tokens || i == spec.position || first == last) continue;
    const uint64_t key = memory_key(tensor_id(static_cast<int32_t>(graph_.input_ids[i])).resource());
    bool written = false;
    for (size_t k = 0; k < step_end_ && !written; ++k) {
      if (k >= first && k < last) continue;
      const Dispatch& d = run_[k];
      for (size_t b = 0; b < d.memory.size() && b < d.variant->bindings.size(); ++b)
        written = written || (d.memory[b] == key && d.variant->bindings[b].access != "read");
    }
    if (!written)
      for (size_t k = first; k < last; ++k) once[k] = true;
  }
  std::vector<Dispatch> prologue, step;
  for (size_t k = 0; k < step_end_; ++k) (once[k] ? prologue : step).push_back(run_[k]);
  step.push_back(make_dispatch(*v, {logits.resource(), {state.buffer, VK_NULL_HANDLE}, {tok.buffer.buffer, VK_NULL_HANDLE},
                                    {pos.buffer.buffer, VK_NULL_HANDLE}},
                               p, v->local_size[0]));
  step.back().where = "decode loop (the greedy token)";
  {
    std::lock_guard<std::mutex> lock(g_variant_mutex);
    ++g_variant_dispatches[v->name];
  }
  loop_.reset();
  loop_ = std::make_unique<VulkanDecodeLoop>(dev_->ctx, *dev_->pipelines, std::move(prologue), std::move(step),
                                             std::move(state), capacity, batch, [this](std::span<const HostTensor* const> inputs) {
                                               if (inputs.size() != in_stage_.size())
                                                 throw RuntimeError(fmt::format("{} inputs for {}", inputs.size(),
                                                                                in_stage_.size()));
                                               for (size_t i = 0; i < inputs.size(); ++i) stage_input(i, *inputs[i]);
                                             });
  loop_key_ = key;
  return loop_.get();
}

std::unique_ptr<GpuTensor> VulkanDelegate::make_tensor(const VkTensor& t, const Representation& r, bool bound) {
  const ir::DType dtype = r.dtype;
  const bool texture = r.texture;
  const int packed = r.packed;
  auto g = std::make_unique<GpuTensor>();
  g->dtype = dtype;
  g->dims = dims_of(t);
  if (g->dims.size() > (texture ? 4u : 8u))
    fail(fmt::format("rank-{} {} tensors are not supported (at most {})", g->dims.size(), texture ? "texture" : "buffer",
                     texture ? 4 : 8));
  for (int64_t d : g->dims)
    if (d < 0) fail(fmt::format("tensor [{}] has a negative dim", fmt::join(g->dims, ",")));
  // Rank 5-8 (buffers only): the leading dims fold into N, so element counts and contiguous
  // indexing hold for shaders that see WHCN sizes; shape ops use copy_nd.glsl.
  std::vector<int64_t> folded = g->dims;
  while (folded.size() > 4) {
    folded[1] *= folded[0];
    folded.erase(folded.begin());
  }
  g->sizes = whcn(folded);
  g->texture = texture;
  g->int8x4 = r.int8x4;
  g->packed_dim = texture || r.int8x4 ? packed : 0;
  if (r.int8x4 && g->dims.size() > 4) fail("int8 activations of rank above 4 are not supported");
  if (dtype == ir::DType::Float16 && !dev_->ctx->fp16())
    fail("f16 tensors need shaderFloat16 and 16-bit storage, which the device lacks");
  if (texture) {
    const VkFormat f = texel_format(dtype);
    if (f == VK_FORMAT_UNDEFINED) fail(fmt::format("{} textures are not supported", ir::dtype_name(dtype)));
    ivec4 e = g->sizes;
    e[packed] = (e[packed] + 3) / 4;
    for (int& x : e) x = std::max(x, 1);  // an empty tensor still gets a 1-texel image
    const uint32_t z = static_cast<uint32_t>(e[2] * e[3]);  // batches stacked along z
    const std::array<uint32_t, 3> extents{static_cast<uint32_t>(e[0]), static_cast<uint32_t>(e[1]), z};
    g->image = bound ? dev_->ctx->make_image(f, extents) : dev_->ctx->make_unbound_image(f, extents);
  } else {
    const auto bytes = static_cast<VkDeviceSize>(r.int8x4 ? g->items() : HostTensor{dtype, g->dims, {}}.numel()) *
                       ir::dtype_size(dtype);
    g->buffer = bound ? dev_->ctx->make_buffer(bytes, Context::Mem::Device) : dev_->ctx->make_unbound_buffer(bytes);
  }
  const VkMemoryRequirements req =
      texture ? dev_->ctx->requirements(g->image) : dev_->ctx->requirements(g->buffer);
  unshared_bytes_ += req.size;
  if (bound) device_bytes_ += req.size;
  return g;
}

// Tensors that share a memory object (mem_obj_id, from the compiler's memory planning) are bound
// to one allocation of the largest size among them: their lifetimes do not overlap, and every
// dispatch is followed by a barrier. A lone member, or members with no common memory type, get
// their own memory in tensor_id().
void VulkanDelegate::bind_memory_objects() {
  std::map<int32_t, std::vector<int32_t>> objects;
  for (size_t id = 0; id < graph_.values.size(); ++id)
    if (const auto* t = std::get_if<VkTensor>(&graph_.values[id]); t && t->constant_id < 0 && t->mem_obj_id >= 0 &&
        t->dims.size() <= 4)
      objects[t->mem_obj_id].push_back(static_cast<int32_t>(id));  // others fail (named) when an op uses them
  for (const auto& [obj, ids] : objects) {
    if (ids.size() < 2) continue;
    std::vector<std::unique_ptr<GpuTensor>> made;
    VkMemoryRequirements req{0, 1, ~0u};
    for (int32_t id : ids) {
      const Representation r = representation(id);
      made.push_back(make_tensor(vk_tensor(id), r, false));
      const VkMemoryRequirements one =
          r.texture ? dev_->ctx->requirements(made.back()->image) : dev_->ctx->requirements(made.back()->buffer);
      req.size = std::max(req.size, one.size);
      req.alignment = std::max(req.alignment, one.alignment);
      req.memoryTypeBits &= one.memoryTypeBits;
    }
    if (req.memoryTypeBits == 0) {
      for (auto& g : made) unshared_bytes_ -= g->texture ? dev_->ctx->requirements(g->image).size
                                                         : dev_->ctx->requirements(g->buffer).size;
      continue;
    }
    shared_.push_back(dev_->ctx->allocate_shared(req));
    device_bytes_ += req.size;
    for (size_t k = 0; k < ids.size(); ++k) {
      if (made[k]->texture) dev_->ctx->bind(made[k]->image, shared_.back());
      else dev_->ctx->bind(made[k]->buffer, shared_.back());
      shared_memory_of_[memory_key(made[k]->resource())] = (uint64_t{3} << 62) ^ reinterpret_cast<uint64_t>(shared_.back().memory);
      tensors_[ids[k]] = std::move(made[k]);
    }
  }
}

// fp16 tensors stage through f32 host buffers, converted on the GPU (encode_staging_copy): the
// host then only copies the plan's f32 bytes. Other dtypes stage as they are on the GPU.
std::unique_ptr<GpuTensor> VulkanDelegate::staging(const GpuTensor& like, Context::Mem mem) {
  auto g = std::make_unique<GpuTensor>();
  g->dtype = like.dtype == ir::DType::Float16 ? ir::DType::Float32 : like.dtype;
  g->dims = like.dims;
  g->sizes = like.sizes;
  const int64_t n = HostTensor{like.dtype, like.dims, {}}.numel();
  g->buffer = dev_->ctx->make_buffer(static_cast<VkDeviceSize>(n) * ir::dtype_size(g->dtype), mem);
  return g;
}

namespace {

// What a computed tensor of `t` holds on the GPU: bool and 8-bit tensors are i32 (0/1 for bools;
// shaders have no 8-bit image formats and most devices lack 8-bit arithmetic).
ir::DType storage_dtype(serializer::VkDataType t) {
  const ir::DType d = cpu::gpu_dtype(t);
  return d == ir::DType::Bool || d == ir::DType::Int8 || d == ir::DType::UInt8 ? ir::DType::Int32 : d;
}

}  // namespace

GpuTensor& VulkanDelegate::tensor_id(int32_t id) {
  if (auto it = state_of_.find(id); it != state_of_.end()) return *it->second;
  const VkTensor& t = vk_tensor(id);
  if (t.constant_id >= 0) fail(fmt::format("value {} is a constant where a computed tensor is expected", id));
  if (tensors_[id]) return *tensors_[id];
  const Representation r = representation(id);
  tensors_[id] = make_tensor(t, r);
  return *tensors_[id];
}

VulkanDelegate::Representation VulkanDelegate::representation(int32_t id) {
  const VkTensor& t = vk_tensor(id);
  using serializer::MemoryLayout;
  using serializer::StorageType;
  StorageType st = t.storage != StorageType::Default ? t.storage : graph_.storage_type_override;
  if (st == StorageType::Default) st = StorageType::Texture3D;
  MemoryLayout ml = t.layout != MemoryLayout::Default ? t.layout : graph_.memory_layout_override;
  if (ml == MemoryLayout::Default) ml = st == StorageType::Buffer ? MemoryLayout::WidthPacked : MemoryLayout::ChannelsPacked;
  if (st == StorageType::Texture2D) fail(fmt::format("value {}: texture2d storage is not supported", id));
  // Packed int8 activations (the q8ta operators'): a buffer of one int per element here, whatever
  // the block layout the program names; only those operators read or write them.
  if (static_cast<int>(ml) > 2 && t.dtype == serializer::VkDataType::Int8 && st == StorageType::Buffer)
    return {ir::DType::Int32, false, t.dims.size() == 4 ? 2 : 0, true};
  if (static_cast<int>(ml) > 2) fail(fmt::format("value {}: layout {} is not supported", id, serializer::to_string(ml)));
  // Buffers are contiguous (W fastest) whatever their layout tag (docs/shader-specs.md).
  return {storage_dtype(t.dtype), st == StorageType::Texture3D, static_cast<int>(ml)};
}

kernels::HostTensor VulkanDelegate::constant_host(int32_t id, ir::DType dtype) {
  const VkTensor& t = vk_tensor(id);
  if (static_cast<size_t>(t.constant_id) >= graph_.constants.size())
    fail(fmt::format("value {}: constant {} is out of range", id, t.constant_id));
  const serializer::VkBytes& b = graph_.constants[t.constant_id];
  HostTensor h{cpu::gpu_dtype(t.dtype), dims_of(t), {}};
  if (b.offset == std::numeric_limits<uint64_t>::max()) {
    auto it = named_.find(b.named_key);
    if (it == named_.end()) fail(fmt::format("value {}: named data '{}' is not in the program nor in an external data file (a program compiled with --external-weights needs its .ptd: beside it as FILE.ptd, or given with --data)", id, b.named_key));
    h.data = it->second;
  } else {
    if (b.offset > payload_bytes_.size() || b.length > payload_bytes_.size() - b.offset)
      fail(fmt::format("value {}: constant bytes lie outside the payload", id));
    h.data = ir::TensorData::view(nullptr, payload_bytes_.data() + b.offset, b.length);
  }
  if (h.data.size() != static_cast<size_t>(h.numel()) * ir::dtype_size(h.dtype))
    fail(fmt::format("value {}: constant has {} bytes, [{}] {} needs more or fewer", id, h.data.size(),
                     fmt::join(h.shape, ","), ir::dtype_name(h.dtype)));
  return h.dtype != dtype ? kernels::cast(h, dtype) : h;
}

std::unique_ptr<GpuTensor> VulkanDelegate::upload(std::vector<int64_t> dims, ir::DType dtype,
                                                  const std::vector<uint8_t>& bytes) {
  auto g = std::make_unique<GpuTensor>();
  g->dtype = dtype;
  g->dims = std::move(dims);
  g->sizes = whcn(g->dims);
  g->buffer = dev_->ctx->make_constant_buffer(bytes.data(), bytes.size());
  return g;
}

GpuTensor& VulkanDelegate::constant_buffer(int32_t id, ir::DType dtype, int64_t numel) {
  auto key = std::make_tuple(id, static_cast<int>(dtype), numel);
  if (auto it = common_->constants.find(key); it != common_->constants.end()) return *it->second;
  const HostTensor h = constant_host(id, dtype);
  std::vector<uint8_t> bytes(h.data.bytes().begin(), h.data.bytes().end());
  if (numel > 0 && h.numel() != numel) {
    if (h.numel() != 1) fail(fmt::format("constant value {} has {} elements, expected {} (or 1)", id, h.numel(), numel));
    std::vector<uint8_t> one = bytes;
    bytes.clear();
    for (int64_t k = 0; k < numel; ++k) bytes.insert(bytes.end(), one.begin(), one.end());
  }
  auto g = upload(numel > 0 && h.numel() != numel ? std::vector<int64_t>{numel} : h.shape, dtype, bytes);
  return *common_->constants.emplace(key, std::move(g)).first->second;
}

VkBuffer VulkanDelegate::packed(size_t i, ir::DType dtype, std::string_view packing, const Packer& pack) {
  if (!is_constant(i)) fail(fmt::format("argument {} must be a constant (weights are prepacked at load)", i));
  auto key = std::make_tuple(id(i), static_cast<int>(dtype), std::string(packing));
  if (auto it = common_->packed.find(key); it != common_->packed.end()) return it->second->buffer.buffer;
  const std::vector<uint8_t> bytes = pack(constant_host(id(i), dtype));
  const int64_t n = static_cast<int64_t>(bytes.size() / ir::dtype_size(dtype));
  return common_->packed.emplace(key, upload({n}, dtype, bytes)).first->second->buffer.buffer;
}

GpuTensor& VulkanDelegate::tensor(size_t i, const GpuTensor* like) {
  if (!is_constant(i)) {
    if (!std::holds_alternative<VkTensor>(value(i))) fail(fmt::format("argument {} is not a Tensor", i));
    return tensor_id(id(i));
  }
  if (!like) fail(fmt::format("argument {} is a constant; this operator needs it prepacked", i));
  auto key = std::make_tuple(id(i), like->texture, like->packed_dim, static_cast<int>(like->dtype));
  if (auto it = common_->materialized.find(key); it != common_->materialized.end()) return *it->second;
  GpuTensor& src = constant_buffer(id(i), like->dtype, 0);
  if (like->int8x4) fail(fmt::format("argument {} is a constant where an int8 activation is expected", i));
  auto g = make_tensor(vk_tensor(id(i)), {like->dtype, like->texture, like->packed_dim});
  const bool was = prepacking_;
  prepacking_ = true;
  encode_copy(*this, *g, src, {});
  prepacking_ = was;
  return *common_->materialized.emplace(key, std::move(g)).first->second;
}

VkBuffer VulkanDelegate::raw(size_t i, ir::DType dtype, int64_t numel) {
  if (!is_constant(i)) fail(fmt::format("argument {} must be a constant (weights are prepacked at load)", i));
  return constant_buffer(id(i), dtype, numel).buffer.buffer;
}

VkBuffer VulkanDelegate::raw_value(int32_t id, ir::DType dtype, int64_t numel) {
  const auto* t = std::get_if<serializer::VkTensor>(&graph_.values.at(static_cast<size_t>(id)));
  if (!t || t->constant_id < 0) fail(fmt::format("value {} must be a constant (weights are prepacked at load)", id));
  return constant_buffer(id, dtype, numel).buffer.buffer;
}

GpuTensor& VulkanDelegate::constant(size_t i, ir::DType dtype) {
  if (!is_constant(i)) fail(fmt::format("argument {} must be a constant", i));
  return constant_buffer(id(i), dtype, 0);
}

VkBuffer VulkanDelegate::filled(int64_t n, double v, ir::DType dtype) {
  HostTensor h = HostTensor::zeros(dtype, {n});
  for (int64_t k = 0; k < n; ++k) h.set_f(k, v);
  auto g = std::make_unique<GpuTensor>();
  g->dtype = dtype;
  g->dims = {n};
  g->buffer = dev_->ctx->make_buffer(h.data.size(), Context::Mem::Upload);
  std::memcpy(g->buffer.mapped, h.data.data(), h.data.size());
  scratch_.push_back(std::move(g));
  return scratch_.back()->buffer.buffer;
}

bool VulkanDelegate::read_by_kernels(int32_t id) const {
  for (uint32_t o : graph_.output_ids)
    if (static_cast<int32_t>(o) == id) return true;
  for (const serializer::VkOperatorCall& c : graph_.chain) {
    if (c.name == "et_vk.select_as_symint.default") continue;
    for (int32_t a : c.args) {
      if (a == id) return true;
      if (a >= 0 && static_cast<size_t>(a) < graph_.values.size())
        if (const auto* list = std::get_if<serializer::VkValueList>(&graph_.values[a]))
          if (std::find(list->items.begin(), list->items.end(), id) != list->items.end()) return true;
    }
  }
  return false;
}

const GpuTensor* VulkanDelegate::input_staging(int32_t id) {
  for (size_t i = 0; i < graph_.input_ids.size() && i < in_stage_.size(); ++i)
    if (static_cast<int32_t>(graph_.input_ids[i]) == id) return in_stage_[i].get();
  return nullptr;
}

GpuTensor& VulkanDelegate::scratch(std::vector<int64_t> dims, const GpuTensor& like) {
  VkTensor t;
  t.dims.assign(dims.begin(), dims.end());
  scratch_.push_back(make_tensor(t, {like.dtype, like.texture, like.packed_dim, like.int8x4}));
  return *scratch_.back();
}

GpuTensor& VulkanDelegate::persistent(int slot, std::vector<int64_t> dims, const GpuTensor& like) {
  const auto key = std::make_pair(static_cast<size_t>(call_ - graph_.chain.data()), slot);
  auto& t = common_->persistent[key];
  if (!t) {
    VkTensor v;
    v.dims.assign(dims.begin(), dims.end());
    t = make_tensor(v, {like.dtype, like.texture, like.packed_dim, like.int8x4});
  } else if (t->dims != dims) {
    fail(fmt::format("state {} is [{}] in another instance, [{}] here", slot, fmt::join(t->dims, ","), fmt::join(dims, ",")));
  }
  return *t;
}

GpuTensor& VulkanDelegate::state_tensor(int32_t id) {
  if (auto it = state_of_.find(id); it != state_of_.end()) return *it->second;
  GpuTensor& initial = tensor_id(id);
  auto& t = common_->persistent[{SIZE_MAX, id}];
  if (!t) {
    t = make_tensor(vk_tensor(id), representation(id));
    const bool was = prepacking_;
    prepacking_ = true;
    encode_copy(*this, *t, initial, {});
    prepacking_ = was;
  }
  return *(state_of_[id] = t.get());
}

// The _dot variants where the device runs the packed dot product fast (on lavapipe, which has
// the instruction but emulates it, the unpacking variants are faster: squeezenet1_1 int8's
// convolutions 80-94 -> 76-78 ms, its classifier 21.2 -> 13.0 ms). VKC_VULKAN_INT_DOT=1 takes
// them wherever the device has the instruction, =0 never.
bool VulkanDelegate::integer_dot_product() const {
  const char* env = std::getenv("VKC_VULKAN_INT_DOT");
  if ((env && std::string_view(env) == "0") || !dev_->ctx->int_dot()) return false;
  if (env && std::string_view(env) == "1") return true;
  return dev_->ctx->int_dot_accelerated();
}

// VKC_VULKAN_SUBGROUP=0 turns the subgroup variants off (A/B runs, devices that misreport them).
bool VulkanDelegate::subgroup_arithmetic() const {
  const char* env = std::getenv("VKC_VULKAN_SUBGROUP");
  return !(env && std::string_view(env) == "0") && dev_->ctx->subgroup_arithmetic();
}

bool VulkanDelegate::cooperative_matrix() const {
  if (const char* env = std::getenv("VKC_VULKAN_COOPMAT"); env && std::string_view(env) == "0") return false;
  return dev_->ctx->coopmat() != Context::Coopmat::None;
}

bool VulkanDelegate::cpu_device() const {
  if (const char* env = std::getenv("VKC_VULKAN_GPU_KERNELS"); env && std::string_view(env) == "1") return false;
  return dev_->ctx->properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

void VulkanDelegate::require_unused(int32_t v, const char* what) {
  for (uint32_t o : graph_.output_ids)
    if (static_cast<int32_t>(o) == v) fail(fmt::format("{} (value {}) is a delegate output; it is not computed", what, v));
  for (const auto& c : graph_.chain) {
    if (&c == call_) continue;
    for (int32_t a : c.args) {
      bool uses = a == v;
      if (const auto* l = std::get_if<serializer::VkValueList>(&graph_.values[a]))
        for (int32_t x : l->items) uses = uses || x == v;
      if (uses) fail(fmt::format("{} (value {}) is read by node {}; it is not computed", what, v, c.node_id));
    }
  }
}

const codegen::LibraryVariant* VulkanDelegate::find_variant(const GpuTensor& out, std::string_view in_storage,
                                                            std::string_view name_prefix, std::string_view op_override) {
  codegen::ShaderLibrary::Query q;
  q.op = op_override.empty() ? std::string_view(op()) : op_override;
  const std::string dtype(out.dtype_name());
  q.dtype = dtype;
  q.storage = out.storage();
  q.layout = out.layout();
  q.in_storage = in_storage == out.storage() ? std::string_view{} : in_storage;
  const std::string prefix = name_prefix.empty() ? std::string() : fmt::format("{}_{}", name_prefix, dtype);
  const bool v13 = dev_->ctx->properties().apiVersion >= VK_API_VERSION_1_3;
  // Cooperative-matrix variants only where an encoder asks for one by name (their bindings,
  // dispatch and requirements differ from the operator's other kernels).
  const bool coopmat = cooperative_matrix() && name_prefix.find("coopmat") != std::string_view::npos;
  q.allow_coopmat_khr = coopmat && dev_->ctx->coopmat() == Context::Coopmat::KHR;
  q.allow_coopmat_nv = coopmat && dev_->ctx->coopmat() == Context::Coopmat::NV;
  // (A variant whose workgroup memory or size the device does not have is skipped: a wide copy of
  // a kernel, say, where its 64-invocation one fits.)
  const VkPhysicalDeviceLimits& limits = dev_->ctx->properties().limits;
  const auto fits_workgroup = [&](const std::array<uint32_t, 3>& size) {
    return size[0] * size[1] * size[2] <= limits.maxComputeWorkGroupInvocations &&
           size[0] <= limits.maxComputeWorkGroupSize[0] && size[1] <= limits.maxComputeWorkGroupSize[1] &&
           size[2] <= limits.maxComputeWorkGroupSize[2];
  };
  // (VKC_VULKAN_SHARED_LIMIT=N lowers the limit, as a smaller device's: read at each lookup.)
  uint32_t shared_limit = dev_->ctx->properties().limits.maxComputeSharedMemorySize;
  if (const char* env = std::getenv("VKC_VULKAN_SHARED_LIMIT"); env && *env)
    shared_limit = std::min<uint32_t>(shared_limit, static_cast<uint32_t>(std::strtoul(env, nullptr, 10)));
  for (const codegen::LibraryVariant* v : dev_->library.find_all(q)) {
    if (!prefix.empty() && v->name.rfind(prefix, 0) != 0) continue;
    if (v->vk_version == "1.3" && !v13) continue;
    if (v->shared_bytes > shared_limit || !fits_workgroup(v->local_size)) continue;
    return &embedded(*v);
  }
  return nullptr;
}

bool VulkanDelegate::has_variant(const GpuTensor& out, std::string_view name_prefix) {
  return find_variant(out, {}, name_prefix, {}) != nullptr;
}

const codegen::LibraryVariant& VulkanDelegate::variant(const GpuTensor& out, std::string_view in_storage,
                                                       std::string_view name_prefix, std::string_view op_override) {
  if (const codegen::LibraryVariant* v = find_variant(out, in_storage, name_prefix, op_override)) return *v;
  const std::string dtype(out.dtype_name());
  const std::string_view in = in_storage == out.storage() ? std::string_view{} : in_storage;
  fail(fmt::format("no shader variant for {} {} {} {}{}{}", op_override.empty() ? std::string_view(op()) : op_override,
                   dtype, out.storage(), out.layout(), in.empty() ? "" : fmt::format(" from {}", in),
                   name_prefix.empty() ? "" : fmt::format(" named {}_{}*", name_prefix, dtype)));
}

const codegen::LibraryVariant& VulkanDelegate::embedded(const codegen::LibraryVariant& v) {
  const auto code = embedded_spirv_.find(v.name);
  if (code == embedded_spirv_.end()) return v;
  if (auto it = embedded_variants_.find(v.name); it != embedded_variants_.end()) return it->second;
  std::vector<uint32_t>& words = embedded_words_[v.name];
  words.resize(code->second.size() / 4);
  std::memcpy(words.data(), code->second.data(), words.size() * 4);
  if (words.empty() || words[0] != 0x07230203u) fail(fmt::format("embedded shader {} is not SPIR-V", v.name));
  codegen::LibraryVariant e = v;
  e.spirv = words;
  return embedded_variants_.emplace(v.name, std::move(e)).first->second;
}

uint64_t VulkanDelegate::memory_key(const Resource& r) const {
  // Handles of different types may coincide: the top bits tag the type.
  const uint64_t key = r.view ? (uint64_t{2} << 62) ^ reinterpret_cast<uint64_t>(r.view)
                              : (uint64_t{1} << 62) ^ reinterpret_cast<uint64_t>(r.buffer);
  auto it = shared_memory_of_.find(key);
  return it == shared_memory_of_.end() ? key : it->second;
}

Dispatch VulkanDelegate::make_dispatch(const codegen::LibraryVariant& v, std::vector<Resource> resources,
                                       const Push& push, int64_t items) const {
  Dispatch d;
  d.variant = &v;
  d.resources = std::move(resources);
  for (const Resource& r : d.resources) d.memory.push_back(memory_key(r));
  d.push = push.bytes();
  d.items = items;
  return d;
}

void VulkanDelegate::dispatch(const codegen::LibraryVariant& v, std::vector<Resource> resources, const Push& push,
                              int64_t items) {
  if (items <= 0) return;  // an empty tensor: nothing to compute
  Dispatch d = make_dispatch(v, std::move(resources), push, items);
  d.where = call_ ? where() : std::string("staging");
  {
    std::lock_guard<std::mutex> lock(g_variant_mutex);
    ++g_variant_dispatches[v.name];
  }
  (prepacking_ ? prepack_ : run_).push_back(std::move(d));
}

}  // namespace vkc::runtime::vk
