// The full conformance sweep over Debian's libonnx-testdata (see docs/conformance.md):
//   vkc_conformance [--data DIR] [--folders a,b] [--filter TEXT] [--json OUT.json] [--doc docs/conformance.md]
//                   [--passing LIST.txt] [--backend cpu] [--rtol R] [--atol A]
// Each case runs in a child process, so a crash or a hang is one failed case, not a lost sweep.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "case_runner.h"
#include "report.h"

namespace fs = std::filesystem;
using namespace vkc::conformance;

namespace {

// Runs the case in a child; its result comes back as JSON through a pipe.
CaseResult run_forked(const fs::path& dir, const CaseOptions& options, int timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return run_case(dir, options);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string s = to_json(run_case(dir, options)).dump();
    for (size_t off = 0; off < s.size();) {
      const ssize_t n = write(fds[1], s.data() + off, s.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CaseResult r;
  r.folder = dir.parent_path().filename().string();
  r.name = dir.filename().string();
  r.status = Status::Fail;
  if (timed_out) r.detail = fmt::format("timed out after {} s", timeout_s);
  else if (WIFSIGNALED(status)) r.detail = fmt::format("crashed (signal {})", WTERMSIG(status));
  else if (!out.empty()) return from_json(nlohmann::json::parse(out));
  else r.detail = "no result";
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vkc conformance sweep over ONNX backend test data"};
  std::string data = "/usr/share/libonnx-testdata/data", folders = "node,pytorch-converted,pytorch-operator,simple";
  std::string filter, json_out, doc, passing;
  CaseOptions options;
  int timeout_s = 120;
  bool no_fork = false, verbose = false;
  app.add_option("--data", data, "test data root")->capture_default_str();
  app.add_option("--folders", folders, "comma-separated folders")->capture_default_str();
  app.add_option("--filter", filter, "only cases whose folder/name contains TEXT");
  app.add_option("--json", json_out, "write all results as JSON");
  app.add_option("--doc", doc, "update the sweep section of this markdown file (docs/conformance.md)");
  app.add_option("--passing", passing, "write the passing cases, one folder/name a line");
  app.add_option("--backend", options.backend)->capture_default_str();
  app.add_option("--rtol", options.rtol)->capture_default_str();
  app.add_option("--atol", options.atol)->capture_default_str();
  app.add_option("--timeout", timeout_s, "seconds per case")->capture_default_str();
  app.add_flag("--no-fork", no_fork, "run cases in this process (for debugging)");
  app.add_flag("-v,--verbose", verbose, "print every case");
  CLI11_PARSE(app, argc, argv);

  std::vector<fs::path> cases;
  for (size_t b = 0; b <= folders.size();) {
    size_t e = folders.find(',', b);
    if (e == std::string::npos) e = folders.size();
    const fs::path dir = fs::path(data) / folders.substr(b, e - b);
    if (fs::is_directory(dir))
      for (const auto& entry : fs::directory_iterator(dir))
        if (fs::exists(entry.path() / "model.onnx")) cases.push_back(entry.path());
    b = e + 1;
  }
  std::sort(cases.begin(), cases.end());
  std::vector<CaseResult> results;
  int counts[3] = {0, 0, 0};
  for (const fs::path& dir : cases) {
    const std::string id = dir.parent_path().filename().string() + "/" + dir.filename().string();
    if (!filter.empty() && id.find(filter) == std::string::npos) continue;
    results.push_back(no_fork ? run_case(dir, options) : run_forked(dir, options, timeout_s));
    const CaseResult& r = results.back();
    ++counts[static_cast<int>(r.status)];
    if (verbose || r.status == Status::Fail)
      fmt::print("{:<11} {}  {}\n", status_name(r.status), id, r.detail.substr(0, 200));
  }
  fmt::print("{} cases: {} pass, {} fail, {} unsupported\n", results.size(), counts[0], counts[1], counts[2]);
  if (!json_out.empty()) std::ofstream(json_out) << report_json(results, options).dump(1) << "\n";
  if (!doc.empty()) update_doc_section(doc, "sweep", report_markdown(results, options));
  if (!passing.empty()) {
    std::ofstream f(passing);
    f << "# Conformance cases (folder/name under " << data << ") that must pass on the " << options.backend
      << " backend.\n# Regenerate: vkc_conformance --passing tests/conformance/in_scope.txt (docs/conformance.md)\n";
    for (const auto& r : results)
      if (r.status == Status::Pass) f << r.folder << "/" << r.name << "\n";
  }
  return 0;
}
