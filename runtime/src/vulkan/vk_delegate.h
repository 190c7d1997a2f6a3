// One VulkanBackend delegate on a Vulkan device: tensors allocated per their storage and layout
// tags, constants uploaded, prepacking run once at load, the graph recorded into one command
// buffer that execute() submits.
#pragma once

#include <map>
#include <set>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "vk_decode_loop.h"
#include "vk_encoder.h"
#include "vkc/runtime/backend.h"

namespace vkc::runtime::vk {

/// What every delegate of one backend shares.
struct Device {
  std::shared_ptr<Context> ctx;
  codegen::ShaderLibrary library;
  std::unique_ptr<PipelineCache> pipelines;
};

/// What the instances of one delegate at several sizes share (backend.h): constants staged once
/// (keyed by value id, the same in every size's payload) and the state kept across runs.
struct DelegateShared : SharedDelegateState {
  std::map<std::tuple<int32_t, int, int64_t>, std::unique_ptr<GpuTensor>> constants;  // (id, dtype, numel)
  std::map<std::tuple<int32_t, bool, int, int>, std::unique_ptr<GpuTensor>> materialized;
  std::map<std::tuple<int32_t, int, std::string>, std::unique_ptr<GpuTensor>> packed;  // (id, dtype, packing)
  std::map<std::pair<size_t, int>, std::unique_ptr<GpuTensor>> persistent;             // (chain index, slot)
  std::set<VkImage> prepared;  // shared images already moved to the general layout (their contents kept)
};

class VulkanDelegate final : public DelegateInstance, private Encoder {
 public:
  /// `shared`: the state of the delegate's other instances (created here when null); without it
  /// the instance keeps its own.
  VulkanDelegate(std::shared_ptr<Device> device, const serializer::BackendDelegate& d, const NamedDataMap& named,
                 std::shared_ptr<SharedDelegateState>* shared = nullptr);
  ~VulkanDelegate() override;
  void execute(std::span<kernels::HostTensor* const> args) override;
  /// A decode loop over this delegate's step (vk_decode_loop.h), made on first use; null where
  /// VKC_VULKAN_DECODE_LOOP=0, VKC_VULKAN_PROFILE=1 (the steps stay timed dispatch by dispatch), or
  /// the spec does not fit: integer tokens and input_pos of one element, logits of one row in a
  /// width-packed texture or a buffer.
  DecodeLoop* decode_loop(const DecodeLoopSpec& spec) override;

 private:
  GpuTensor& tensor_id(int32_t id) override;
  GpuTensor& tensor(size_t i, const GpuTensor* like) override;
  VkBuffer raw(size_t i, ir::DType dtype, int64_t numel) override;
  VkBuffer raw_value(int32_t id, ir::DType dtype, int64_t numel) override;
  GpuTensor& constant(size_t i, ir::DType dtype) override;
  VkBuffer packed(size_t i, ir::DType dtype, std::string_view packing, const Packer& pack) override;
  VkBuffer filled(int64_t n, double v, ir::DType dtype) override;
  GpuTensor& scratch(std::vector<int64_t> dims, const GpuTensor& like) override;
  GpuTensor& persistent(int slot, std::vector<int64_t> dims, const GpuTensor& like) override;
  GpuTensor& state_tensor(int32_t id) override;
  void require_unused(int32_t id, const char* what) override;
  bool cpu_device() const override;
  bool cooperative_matrix() const override;
  bool integer_dot_product() const override;
  bool subgroup_arithmetic() const override;
  const GpuTensor* input_staging(int32_t id) override;
  /// Whether a call other than select_as_symint (which reads the staging buffer) reads value `id`, or
  /// it is a delegate output: an input nothing else reads is not copied from its staging buffer.
  bool read_by_kernels(int32_t id) const;
  const codegen::LibraryVariant& variant(const GpuTensor& out, std::string_view in_storage,
                                         std::string_view name_prefix, std::string_view op_override) override;
  bool has_variant(const GpuTensor& out, std::string_view name_prefix) override;
  const codegen::LibraryVariant* find_variant(const GpuTensor& out, std::string_view in_storage,
                                              std::string_view name_prefix, std::string_view op_override);
  void dispatch(const codegen::LibraryVariant& v, std::vector<Resource> resources, const Push& push,
                int64_t items) override;

  struct Representation {
    ir::DType dtype;
    bool texture;
    int packed;
    bool int8x4 = false;
  };
  std::unique_ptr<GpuTensor> make_tensor(const serializer::VkTensor& t, const Representation& r, bool bound = true);
  /// What value `id` is on the GPU: its dtype there, storage and packed dim (tags and overrides resolved).
  Representation representation(int32_t id);
  void bind_memory_objects();
  GpuTensor& constant_buffer(int32_t id, ir::DType dtype, int64_t numel);
  kernels::HostTensor constant_host(int32_t id, ir::DType dtype);
  std::unique_ptr<GpuTensor> upload(std::vector<int64_t> dims, ir::DType dtype, const std::vector<uint8_t>& bytes);
  std::unique_ptr<GpuTensor> staging(const GpuTensor& like, Context::Mem mem);
  /// Input i's host tensor into its staging buffer (checked against the delegate's input).
  void stage_input(size_t i, const kernels::HostTensor& x);
  Dispatch make_dispatch(const codegen::LibraryVariant& v, std::vector<Resource> resources, const Push& push,
                         int64_t items) const;

  std::shared_ptr<Device> dev_;
  const NamedDataMap& named_;
  std::span<const uint8_t> payload_bytes_;
  // SPIR-V the payload embeds (VkGraph.shaders), by variant name; used in place of the
  // library's code for that variant (same interface), in variants made by embedded().
  std::map<std::string, std::span<const uint8_t>, std::less<>> embedded_spirv_;
  std::map<std::string, codegen::LibraryVariant, std::less<>> embedded_variants_;
  std::map<std::string, std::vector<uint32_t>, std::less<>> embedded_words_;  // their SPIR-V, aligned
  const codegen::LibraryVariant& embedded(const codegen::LibraryVariant& v);
  serializer::VkGraph graph_;
  // Memory of the shared memory objects; declared before the tensors bound to it, so it outlives them.
  std::vector<SharedMemory> shared_;
  VkDeviceSize device_bytes_ = 0, unshared_bytes_ = 0;  // tensor memory allocated / without sharing
  std::vector<std::unique_ptr<GpuTensor>> tensors_;  // by value id
  std::map<int32_t, GpuTensor*> state_of_;             // value id -> its state_tensor
  std::shared_ptr<DelegateShared> common_;
  std::vector<std::unique_ptr<GpuTensor>> scratch_;
  std::vector<std::unique_ptr<GpuTensor>> in_stage_, out_stage_;
  // Discrete GPUs: the outputs staged in device memory, copied into out_stage_ at the run's end.
  std::vector<std::unique_ptr<GpuTensor>> out_device_;
  std::vector<BufferCopy> readback_;
  std::vector<Dispatch> prepack_, run_;
  size_t step_end_ = 0;  // run_'s dispatches before the outputs' staging copies
  std::vector<std::pair<size_t, size_t>> input_copies_;  // by input: its staging copy's dispatches in run_
  // A resource's memory key (Dispatch::memory): its handle, or for tensors bound to a shared
  // memory object, that object's memory (so aliased tensors order their dispatches).
  std::unordered_map<uint64_t, uint64_t> shared_memory_of_;
  uint64_t memory_key(const Resource& r) const;
  bool prepacking_ = false;
  std::unique_ptr<Recording> recording_;
  std::unique_ptr<VulkanDecodeLoop> loop_;  // (declared last: released before what it records)
  std::tuple<size_t, size_t, size_t, int64_t, size_t> loop_key_{};  // tokens, position, logits, vocab, batch
};

}  // namespace vkc::runtime::vk
