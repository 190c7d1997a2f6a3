// Greedy decoding kept on the GPU (backend.h's DecodeLoop): a decode step's dispatches (a
// delegate's, less the copies of its outputs to the host) and greedy_token.glsl, which picks the
// step's token from its logits, writes it into the token input's staging buffer, advances the
// input_pos staging buffer and keeps the token for the host, are recorded `batch` steps to a
// command buffer. Two such buffers alternate: the GPU runs one batch while the host reads the
// tokens of the one before, so no step waits on the host.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "vk_pipeline.h"
#include "vkc/runtime/backend.h"

namespace vkc::runtime::vk {

class VulkanDecodeLoop final : public DecodeLoop {
 public:
  /// `step`: one step's dispatches, greedy_token's last, which keeps step i's token at
  /// state[1 + i % capacity] and counts the steps in state[0] (`state`: host-visible, mapped).
  /// `prologue`: dispatches run once a run before the steps (the copies of inputs that keep their
  /// value across steps). `stage` writes the delegate's inputs into their staging buffers.
  VulkanDecodeLoop(std::shared_ptr<Context> ctx, PipelineCache& cache, std::vector<Dispatch> prologue,
                   std::vector<Dispatch> step, Buffer state, size_t capacity, size_t batch,
                   std::function<void(std::span<const kernels::HostTensor* const>)> stage);
  ~VulkanDecodeLoop() override;
  size_t run(std::span<const kernels::HostTensor* const> inputs, size_t steps,
             const std::function<bool(int64_t)>& on_token) override;
  void prepare(size_t steps) override;

  /// The steps a command buffer holds at most: VKC_VULKAN_DECODE_LOOP=N (0: no loop), default 8.
  static size_t batch_from_env();
  /// Whether VKC_VULKAN_PROFILE allows the loop: unset, or `run` (the loop then times each batch
  /// on the GPU and prints, when released, its GPU time a step beside the host's wall time a step).
  static bool profile_allows();

 private:
  struct Slot {
    std::unique_ptr<Recording> recording;
    size_t steps = 0;
    VkFence fence = VK_NULL_HANDLE;
  };
  /// A slot holding `steps` steps (recorded on first use).
  Slot& slot(size_t index, size_t steps);

  std::shared_ptr<Context> ctx_;
  PipelineCache& cache_;
  std::vector<Dispatch> step_;
  Buffer state_;
  size_t capacity_, batch_;
  std::function<void(std::span<const kernels::HostTensor* const>)> stage_;
  Slot slots_[3];  // two of `batch_` steps, alternating; one for a shorter last batch
  std::vector<Dispatch> prologue_;
  Slot prologue_slot_;
  bool profile_ = false;  // VKC_VULKAN_PROFILE=run
  double gpu_ns_ = 0, wall_ns_ = 0;
  size_t profiled_steps_ = 0;
  size_t step_barriers_ = 0, step_chained_ = 0, recorded_steps_ = 0;  // over the recordings, for the profile
};

}  // namespace vkc::runtime::vk
