// `vkc compile` progress on stderr: a bar redrawn in place on a terminal, plain lines otherwise.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "vkc/compiler/driver.h"

namespace vkc::tools {

class ProgressDisplay {
 public:
  enum class Style { Bar, Lines };
  explicit ProgressDisplay(Style style) : style_(style) {}
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;
  /// Erases a bar still on screen (e.g. when the compile failed), so error lines start clean.
  ~ProgressDisplay() { clear(); }

  void operator()(const compiler::PhaseEvent& e) {
    std::lock_guard lock(mutex_);  // byte updates come from worker threads
    const size_t n = compiler::kNumPhases;
    const char* name = compiler::kPhases[e.index];
    if (e.update) return bytes(e, name);
    if (!e.finished) phase_start_ = std::chrono::steady_clock::now(), last_line_ = phase_start_;
    if (e.finished) total_ += e.seconds;
    if (style_ == Style::Lines) {
      if (!e.finished) fmt::print(stderr, "vkc: [{}/{}] {}\n", e.index + 1, n, name);
      if (e.finished && e.index + 1 == n) fmt::print(stderr, "vkc: done in {:.1f} ms\n", total_ * 1e3);
      return;
    }
    if (e.finished && e.index + 1 == n) return clear();
    const size_t done = e.index + (e.finished ? 1 : 0), width = 20;
    const std::string bar = std::string(done * width / n, '#') + std::string(width - done * width / n, '.');
    fmt::print(stderr, "\r\033[K[{}] {}/{} {}", bar, done, n, name);
    std::fflush(stderr);
    shown_ = true;
  }

 private:
  // "build: 1.2 of 3.9 GiB, 850 MiB/s": in the bar, or a line at most every 2 s.
  void bytes(const compiler::PhaseEvent& e, const char* name) {
    const auto now = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(now - phase_start_).count();
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    const std::string text = fmt::format("{}: {:.2f} of {:.2f} GiB, {:.0f} MiB/s", name, e.bytes_done / kGiB,
                                         e.bytes_total / kGiB, secs > 0 ? e.bytes_done / secs / (1 << 20) : 0.0);
    if (style_ == Style::Lines) {
      if (std::chrono::duration<double>(now - last_line_).count() < 2.0) return;
      last_line_ = now;
      fmt::print(stderr, "vkc: [{}/{}] {}\n", e.index + 1, compiler::kNumPhases, text);
      return;
    }
    const size_t width = 20, n = compiler::kNumPhases;
    const size_t fill = e.index * width / n + (e.bytes_total ? e.bytes_done * width / n / e.bytes_total : 0);
    fmt::print(stderr, "\r\033[K[{}{}] {}/{} {}", std::string(fill, '#'), std::string(width - fill, '.'), e.index, n, text);
    std::fflush(stderr);
    shown_ = true;
  }

  void clear() {
    if (!shown_) return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

  Style style_;
  bool shown_ = false;
  double total_ = 0;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point phase_start_ = std::chrono::steady_clock::now(), last_line_ = phase_start_;
};

}  // namespace vkc::tools
