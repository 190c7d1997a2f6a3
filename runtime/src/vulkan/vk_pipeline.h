// Compute pipelines for shader-library variants (cached by name), push-constant blocks set by
// member name, and the recorded list of dispatches of one delegate.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vk_context.h"
#include "vkc/codegen/shader_library.h"

namespace vkc::runtime::vk {

using ivec4 = std::array<int32_t, 4>;

/// One variant's push-constant block (std430, offsets from the bundle), filled by member name;
/// a name or type the variant does not declare is an error, so specs and encoders cannot drift.
class Push {
 public:
  explicit Push(const codegen::LibraryVariant& v);
  Push& i(const char* name, int32_t x);
  Push& f(const char* name, float x);
  Push& iv(const char* name, ivec4 x);                  // ivec4, or the first lanes of ivec2/ivec3
  Push& fv2(const char* name, float x, float y);
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void put(const char* name, const char* type, const void* data, size_t size);
  const codegen::LibraryVariant& v_;
  std::vector<uint8_t> bytes_;
};

/// A binding of one dispatch: a storage buffer or a storage image view.
struct Resource {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
};

struct Dispatch {
  const codegen::LibraryVariant* variant = nullptr;
  std::vector<Resource> resources;  // by binding number
  std::vector<uint64_t> memory;     // by binding: what memory it lives in (aliased tensors share a key)
  std::vector<uint8_t> push;
  int64_t items = 0;                // invocations (output elements or texels)
  std::string where;                // "node 3 (aten.add.Tensor)" for errors
};

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class PipelineCache {
 public:
  /// `library`: where chain twins are looked up (null: no dispatch chains).
  explicit PipelineCache(std::shared_ptr<Context> ctx, const codegen::ShaderLibrary* library = nullptr)
      : ctx_(std::move(ctx)), library_(library) {}
  ~PipelineCache();
  const Pipeline& get(const codegen::LibraryVariant& v);
  /// The variant's `_chain` twin (shader-specs' `chain`, vkc_chain.glslh), null where it has none.
  const codegen::LibraryVariant* chain_twin(const codegen::LibraryVariant& v) const;

 private:
  void print_pipeline_stats(VkDevice dev, VkPipeline pipeline, const std::string& name) const;

  std::shared_ptr<Context> ctx_;
  const codegen::ShaderLibrary* library_ = nullptr;
  std::map<std::string, Pipeline> pipelines_;
};

/// Descriptor sets for a list of dispatches, recorded into one command buffer. A memory barrier
/// goes before a dispatch only where it reads or writes memory an earlier dispatch since the last
/// barrier wrote, or writes memory one read (Dispatch::memory: tensors aliased by the memory plan
/// share a key); independent dispatches run without one. With Profile::Dispatch (or
/// `full_barriers`), every dispatch is followed by a barrier, and with Profile::Dispatch a GPU
/// timestamp; the destructor prints each operator's mean GPU time over the runs to stderr. With
/// Profile::Run the barriers stay as they are and two timestamps time the whole command buffer:
/// the destructor prints its mean GPU time beside the host's wall time of a run (submit to fence).
enum class Profile { Off, Run, Dispatch };
/// A copy the command buffer makes after its last dispatch (a device-local output into the
/// host-visible buffer the host reads: one transfer over the bus instead of a shader's scattered
/// writes across it).
struct BufferCopy {
  VkBuffer src = VK_NULL_HANDLE, dst = VK_NULL_HANDLE;
  VkDeviceSize bytes = 0;
};
class Recording {
 public:
  Recording(std::shared_ptr<Context> ctx, PipelineCache& cache, const std::vector<Dispatch>& ds,
            const std::vector<VkImage>& images_to_prepare, Profile profile = Profile::Off, bool full_barriers = false,
            const std::vector<BufferCopy>& copies_after = {});
  /// Barriers recorded between dispatches, and dispatches chained to the one before instead of a
  /// barrier (vk_chain.h), for tests and the profile.
  size_t barriers() const { return barriers_; }
  size_t chained() const { return chained_; }
  /// Throws where a chained dispatch of the last run waited past its bound (call once its fence
  /// signalled; run() calls it).
  void check_chains() const;
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
  void run();
  /// Submits the command buffer to signal `fence` without waiting; it may not be submitted again
  /// before the fence signals.
  void submit(VkFence fence) { ctx_->submit(cb_, fence); }
  /// Profile::Run, once the last submit()'s fence signalled: its GPU time in ns (0 without a
  /// profile; not added to the profile the destructor prints).
  double submitted_gpu_ns() const;
  /// Profile::Run: adds the wall time of one whole execute() (staging and readback included).
  void add_execute_ns(double ns) { execute_ns_ += ns; }

 private:
  void print_profile() const;
  std::shared_ptr<Context> ctx_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;  // profiling: timestamps before the first and after each dispatch
  std::vector<std::string> where_;        // per dispatch
  std::vector<double> gpu_ns_;            // per dispatch (Profile::Run: one, the whole run), summed over runs
  double wall_ns_ = 0;                    // host time of the runs (submit to fence), summed
  double execute_ns_ = 0;                 // host time of the delegate's execute() calls, summed
  bool whole_run_ = false;                // Profile::Run
  size_t dispatches_ = 0;
  int runs_ = 0;
  size_t barriers_ = 0, chained_ = 0;
  Buffer chain_counters_, chain_flag_;  // chained dispatches: their counters, and counter 0 read back
};

}  // namespace vkc::runtime::vk
