// Runs the vkc binary for CLI tests: exit code, stdout and stderr apart.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace vkc::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
  /// Number of lines on stderr.
  size_t err_lines() const {
    size_t n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Runs `VKC_BINARY args` through the shell (args are passed as written).
/// Runs a shell command line, capturing its stdout, stderr and exit code.
inline CliResult run_shell(const std::string& command) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto out = dir / ("vkc-cli-out-" + std::to_string(::getpid()));
  const auto err = dir / ("vkc-cli-err-" + std::to_string(::getpid()));
  const std::string cmd = command + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

/// Runs the vkc binary with `args`.
inline CliResult run_vkc(const std::string& args) { return run_shell(std::string(VKC_BINARY) + " " + args); }

}  // namespace vkc::test
