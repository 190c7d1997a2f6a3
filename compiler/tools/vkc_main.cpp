// The vkc command: a thin layer over the compiler library.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "vkc/compiler/driver.h"
#include "vkc/compiler/inspect.h"
#include "vkc/compiler/option_parsing.h"
#include "vkc/passes/pipeline.h"

#ifndef VKC_VERSION
#define VKC_VERSION "unknown"
#endif

namespace {

struct CompileArgs {
  std::string model, output;
  bool small_texture_limits = false, skip_memory_planning = false, force_fp16 = false, verbose = false;
  bool print_pipeline = false, json = false;
  std::string texture_limits, dump_ir_after;
  std::vector<std::string> input_shapes;
};

int run_compile(const CompileArgs& a) {
  using namespace vkc;
  if (a.print_pipeline) {
    for (const auto& p : passes::pipeline()) fmt::print("{:<22} {}\n", p.name, p.summary);
    return 0;
  }
  if (a.model.empty()) throw compiler::OptionError("compile: MODEL is required");
  if (a.output.empty()) throw compiler::OptionError("compile: -o OUT.pte is required");
  compiler::CompileConfig config;
  if (a.small_texture_limits) config.options.small_texture_limits = true;
  if (a.skip_memory_planning) config.options.skip_memory_planning = true;
  if (a.force_fp16) config.options.force_fp16 = true;
  if (!a.texture_limits.empty()) config.options.texture_limits = compiler::parse_texture_limits(a.texture_limits);
  for (const auto& s : a.input_shapes) {
    auto [name, dims] = compiler::parse_input_shape(s);
    if (!config.input_shapes.emplace(name, dims).second)
      throw compiler::OptionError(fmt::format("--input-shape given twice for '{}'", name));
  }
  config.dump_ir_after = a.dump_ir_after;
  config.ir_dump = [](const std::string& pass, const std::string& text) {
    fmt::print(stderr, "// ----- IR after {}\n{}", pass, text);
  };

  if (a.verbose) {
    config.on_partition = [](const partitioner::Partition& p) {
      size_t delegated = 0;
      fmt::print(stderr, "{:<32} {:<44} {}\n", "node", "operator", "delegate");
      for (const auto& d : p.decisions) {
        fmt::print(stderr, "{:<32} {:<44} {}\n", d.node, d.op, d.delegate >= 0 ? std::to_string(d.delegate) : d.reason);
        delegated += d.delegate >= 0;
      }
      fmt::print(stderr, "delegated {} of {} nodes into {} delegate(s)\n", delegated, p.decisions.size(),
                 p.delegates.size());
    };
  }
  const auto start = std::chrono::steady_clock::now();
  const compiler::CompileStats stats = compiler::compile_file(a.model, a.output, config);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (a.verbose) {
    std::string phases;
    for (const auto& [name, secs] : stats.phase_seconds) phases += fmt::format(" {} {:.1f} ms", name, secs * 1e3);
    fmt::print(stderr, "time:{}\n", phases);
  }
  if (a.json) {
    nlohmann::ordered_json j = {{"output", a.output},
                                {"bytes", stats.output_bytes},
                                {"onnx_nodes", stats.onnx_nodes},
                                {"runtime_nodes", stats.runtime_nodes},
                                {"delegates", stats.delegates},
                                {"constants", stats.named_data},
                                {"seconds", seconds}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("wrote {} ({} bytes): {} delegate(s), {} runtime ops from {} ONNX nodes, {} constants, {:.3f} s\n",
               a.output, stats.output_bytes, stats.delegates, stats.runtime_nodes, stats.onnx_nodes, stats.named_data,
               seconds);
  }
  return 0;
}

}  // namespace

namespace {
// Leaves without running static destructors: tearing down ONNX's schema registry
// and the freed model costs more than some compiles. Output is flushed first.
[[noreturn]] void finish(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

int run(int argc, char** argv);
}  // namespace

int main(int argc, char** argv) { finish(run(argc, argv)); }

namespace {
int run(int argc, char** argv) {
  CLI::App app{"vkc: ahead-of-time ONNX -> ExecuTorch Vulkan compiler"};
  app.set_version_flag("--version", std::string("vkc ") + VKC_VERSION);
  app.require_subcommand(1);

  CompileArgs c;
  CLI::App* compile = app.add_subcommand("compile", "compile an ONNX model into an ExecuTorch .pte");
  compile->add_option("MODEL", c.model, "input .onnx model");
  compile->add_option("-o,--output", c.output, "output .pte file");
  compile->add_flag("--small-texture-limits", c.small_texture_limits, "texture limits 2048,2048,2048");
  compile->add_option("--texture-limits", c.texture_limits, "texture limits X,Y,Z (overrides --small-texture-limits)");
  compile->add_flag("--skip-memory-planning", c.skip_memory_planning, "give every tensor its own memory");
  compile->add_flag("--force-fp16", c.force_fp16, "run fp32 tensors as fp16 on the GPU");
  compile->add_option("--input-shape", c.input_shapes, "fix an input's dims: NAME=1x3x224x224 (repeatable)");
  compile->add_flag("--print-pipeline", c.print_pipeline, "list the passes and exit");
  compile->add_option("--dump-ir-after", c.dump_ir_after, "print the IR after PASS (or 'all') to stderr");
  compile->add_flag("--json", c.json, "print the result as JSON");
  compile->add_flag("-v,--verbose", c.verbose, "print the partition decisions to stderr");

  std::string inspect_path;
  bool inspect_as_json = false;
  CLI::App* inspect = app.add_subcommand("inspect", "describe a .pte: plans, delegates, operators, options, sizes");
  inspect->add_option("FILE", inspect_path, "the .pte to inspect")->required();
  inspect->add_flag("--json", inspect_as_json, "print JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "vkc: error: {} (see vkc --help)\n", e.what());
    return 2;
  }

  try {
    if (compile->parsed()) return run_compile(c);
    const auto report = vkc::compiler::inspect_file(inspect_path);
    fmt::print("{}", inspect_as_json ? vkc::compiler::inspect_json(report) : vkc::compiler::inspect_text(report));
    return 0;
  } catch (const vkc::compiler::OptionError& e) {
    fmt::print(stderr, "vkc: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "vkc: error: {}\n", e.what());
    return 1;
  }
}
}  // namespace
