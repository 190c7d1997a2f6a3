// `vkc compile` progress on stderr: a bar redrawn in place on a terminal, plain lines otherwise.
#pragma once

#include <fmt/format.h>

#include <cstdio>
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
    const size_t n = compiler::kNumPhases;
    const char* name = compiler::kPhases[e.index];
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
  void clear() {
    if (!shown_) return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

  Style style_;
  bool shown_ = false;
  double total_ = 0;
};

}  // namespace vkc::tools
