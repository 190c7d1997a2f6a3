// Progress reports of a compile: one call as each phase starts and one as it ends.
#pragma once

#include <functional>
#include <string_view>

namespace vkc {

/// The phases of a compile, in the order they run.
enum class Phase { Import, Passes, Partition, Build, Write };
inline constexpr int kNumPhases = 5;

/// "import", "passes", "partition", "build", "write" (the names `vkc compile -v` times).
std::string_view to_string(Phase phase);

struct Progress {
  Phase phase = Phase::Import;
  bool finished = false;  // false: the phase starts; true: it ended
  double seconds = 0;     // the phase's wall time, when finished
  /// Share of the phases done so far, 0 to 1 (1 after the last phase ends).
  double fraction = 0;
};

/// Called on the compiling thread. If it throws, the compile stops and the exception's
/// message becomes an error diagnostic (a way to cancel).
using ProgressCallback = std::function<void(const Progress&)>;

}  // namespace vkc
