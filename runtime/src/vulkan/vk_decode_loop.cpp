#include "vk_decode_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <string_view>

namespace vkc::runtime::vk {

size_t VulkanDecodeLoop::batch_from_env() {
  const char* env = std::getenv("VKC_VULKAN_DECODE_LOOP");  // (read at each call: the tests switch it)
  if (!env || !*env) return 8;
  return static_cast<size_t>(std::max(0L, std::strtol(env, nullptr, 10)));
}

bool VulkanDecodeLoop::profile_allows() {
  const char* env = std::getenv("VKC_VULKAN_PROFILE");
  return !env || !*env || std::string_view(env) == "run";
}

VulkanDecodeLoop::VulkanDecodeLoop(std::shared_ptr<Context> ctx, PipelineCache& cache, std::vector<Dispatch> prologue,
                                   std::vector<Dispatch> step, Buffer state, size_t capacity, size_t batch,
                                   std::function<void(std::span<const kernels::HostTensor* const>)> stage)
    : ctx_(std::move(ctx)),
      cache_(cache),
      step_(std::move(step)),
      state_(std::move(state)),
      capacity_(capacity),
      batch_(batch),
      stage_(std::move(stage)),
      prologue_(std::move(prologue)) {
  if (batch_ == 0 || capacity_ < 4 * batch_) throw RuntimeError("decode loop: the token ring is too small");
  const char* env = std::getenv("VKC_VULKAN_PROFILE");
  profile_ = env && std::string_view(env) == "run";
}

VulkanDecodeLoop::~VulkanDecodeLoop() {
  if (profile_ && profiled_steps_ > 0)
    fmt::print(stderr,
               "vulkan decode loop profile: {} step(s) in batches of {} ({} dispatches, {:.1f} barriers, {:.1f} chained a "
               "step); {:.3f} ms GPU time, {:.3f} ms host wall a step\n",
               profiled_steps_, batch_, step_.size(), static_cast<double>(step_barriers_) / std::max<size_t>(1, recorded_steps_),
               static_cast<double>(step_chained_) / std::max<size_t>(1, recorded_steps_), gpu_ns_ / static_cast<double>(profiled_steps_) / 1e6,
               wall_ns_ / static_cast<double>(profiled_steps_) / 1e6);
  for (Slot* s : {&slots_[0], &slots_[1], &slots_[2], &prologue_slot_}) {
    s->recording.reset();
    ctx_->destroy_fence(s->fence);
  }
}

VulkanDecodeLoop::Slot& VulkanDecodeLoop::slot(size_t index, size_t steps) {
  Slot& s = slots_[index];
  if (!s.fence) s.fence = ctx_->make_fence();
  if (s.recording && s.steps == steps) return s;
  std::vector<Dispatch> ds;
  ds.reserve(step_.size() * steps);
  for (size_t i = 0; i < steps; ++i) ds.insert(ds.end(), step_.begin(), step_.end());
  s.recording.reset();
  s.recording = std::make_unique<Recording>(ctx_, cache_, ds, std::vector<VkImage>{},
                                            profile_ ? Profile::Run : Profile::Off);
  s.steps = steps;
  step_barriers_ += s.recording->barriers();
  step_chained_ += s.recording->chained();
  recorded_steps_ += steps;
  return s;
}

void VulkanDecodeLoop::prepare(size_t steps) {
  if (!prologue_.empty() && !prologue_slot_.recording) {
    prologue_slot_.fence = ctx_->make_fence();
    prologue_slot_.recording = std::make_unique<Recording>(ctx_, cache_, prologue_, std::vector<VkImage>{});
  }
  if (steps >= batch_) slot(0, batch_);
  if (steps >= 2 * batch_) slot(1, batch_);
  if (steps % batch_ != 0) slot(2, steps % batch_);
}

size_t VulkanDecodeLoop::run(std::span<const kernels::HostTensor* const> inputs, size_t steps,
                             const std::function<bool(int64_t)>& on_token) {
  const auto t0 = std::chrono::steady_clock::now();
  stage_(inputs);
  auto* state = static_cast<int32_t*>(state_.mapped);
  state[0] = 0;
  struct InFlight {
    Slot* slot;
    size_t end;  // the steps submitted up to and with it
  };
  std::deque<InFlight> in_flight;
  size_t submitted = 0, delivered = 0, next_slot = 0;
  const auto submit_next = [&] {
    const size_t n = std::min(batch_, steps - submitted);
    Slot& s = n == batch_ ? slot(next_slot, n) : slot(2, n);
    if (n == batch_) next_slot ^= 1;
    s.recording->submit(s.fence);
    submitted += n;
    in_flight.push_back({&s, submitted});
  };
  bool stop = false;
  prepare(0);  // (the prologue's recording, where prepare() was not called)
  if (prologue_slot_.recording) {
    prologue_slot_.recording->submit(prologue_slot_.fence);
    in_flight.push_back({&prologue_slot_, 0});
  }
  try {
    while (submitted < steps && in_flight.size() < 2 + (prologue_slot_.recording ? 1 : 0)) submit_next();
    while (!in_flight.empty()) {
      const InFlight done = in_flight.front();
      in_flight.pop_front();
      ctx_->wait(done.slot->fence);
      done.slot->recording->check_chains();
      if (done.slot == &prologue_slot_) continue;
      if (profile_) gpu_ns_ += done.slot->recording->submitted_gpu_ns();
      if (stop) continue;
      if (submitted < steps) submit_next();  // the GPU goes on while the host reads these tokens
      for (; delivered < done.end && !stop; ++delivered)
        stop = !on_token(state[1 + delivered % capacity_]);
    }
  } catch (...) {
    for (const InFlight& f : in_flight) ctx_->wait(f.slot->fence);  // nothing left running on our buffers
    throw;
  }
  if (profile_) {
    wall_ns_ += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    profiled_steps_ += submitted;
  }
  return delivered;
}

}  // namespace vkc::runtime::vk
