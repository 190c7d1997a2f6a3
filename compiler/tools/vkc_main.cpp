// The vkc command: a thin layer over the compiler library.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "vkc/serializer/ptd.h"
#include "vkc/compiler/driver.h"
#include "vkc/compiler/inspect.h"
#include "vkc/compiler/inspect_gates.h"
#include "vkc/compiler/op_coverage.h"
#include "vkc/compiler/option_parsing.h"
#include "vkc/compiler/partition_report.h"
#include "vkc/compiler/quant_report.h"
#include "vkc/partitioner/device_profile.h"
#include "vkc/passes/pipeline.h"
#include "vkc/passes/quantize.h"
#include "progress_display.h"
#include "shaders_command.h"
#include "run_command.h"
#include "tokenize_command.h"

#ifndef VKC_VERSION
#define VKC_VERSION "unknown"
#endif

namespace {

// Reports go next to the .pte; a failure to write one is an error of its own.
void write_text_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
    throw std::runtime_error(fmt::format("cannot write '{}'", path));
}

struct CompileArgs {
  std::string model, output;
  bool small_texture_limits = false, skip_memory_planning = false, force_fp16 = false, verbose = false;
  bool print_pipeline = false, json = false, list_devices = false, no_embed_shaders = false;
  int progress = 0;  // --progress counts +1, --no-progress -1; 0: on when stderr is a terminal
  std::string texture_limits, dump_ir_after, device, device_file, quantize, fallback = "none", report, report_dot;
  std::vector<std::string> input_shapes;
  std::vector<std::string> dims;              // --dim NAME=VALUE (repeatable)
  std::vector<std::string> input_values;      // --input-value NAME=V[,V...] (repeatable)
  int64_t max_seq_len = 0;                    // --max-seq-len N
  std::string encoder;                        // --encoder FILE.onnx
  std::optional<int64_t> bos;                 // --bos ID
  std::vector<int64_t> eos;                   // --eos ID[,ID...]
  std::vector<std::string> quantize_exclude;  // --quantize-exclude GLOB (repeatable)
  int64_t quantize_min_elements = vkc::passes::kMinQuantizedElements;
  std::vector<std::string> skip_passes;       // --skip-pass NAME (repeatable)
  std::string quant_report;                   // --quant-report FILE.json
  bool external_weights = false;              // --external-weights [FILE.ptd]
  std::string external_weights_file;          //   its FILE (default: OUT with .ptd)
};

int run_compile(const CompileArgs& a) {
  using namespace vkc;
  if (a.list_devices) {
    for (const auto& name : partitioner::builtin_device_profile_names()) {
      const auto p = partitioner::builtin_device_profile(name);
      fmt::print("{:<16} {}\n", name, p.description);
    }
    return 0;
  }
  if (a.print_pipeline) {
    for (const auto& p : passes::pipeline()) fmt::print("{:<22} {}\n", p.name, p.summary);
    return 0;
  }
  if (a.model.empty()) throw compiler::OptionError("compile: MODEL is required");
  if (a.output.empty()) throw compiler::OptionError("compile: -o OUT.pte is required");
  if (!a.device.empty() && !a.device_file.empty())
    throw compiler::OptionError("--device and --device-file are exclusive");
  if (!a.quantize.empty()) {
    try {
      (void)passes::parse_quant_recipe(a.quantize);
    } catch (const std::invalid_argument& e) {
      throw compiler::OptionError(e.what());
    }
  } else if (!a.quantize_exclude.empty()) {
    throw compiler::OptionError("--quantize-exclude needs --quantize RECIPE");
  }
  compiler::CompileConfig config;
  if (!a.device.empty()) config.device = partitioner::builtin_device_profile(a.device);
  if (!a.device_file.empty()) config.device = partitioner::load_device_profile(a.device_file);
  config.cpu_fallback = a.fallback == "cpu";
  config.embed_shaders = !a.no_embed_shaders;
  if (a.small_texture_limits) config.options.small_texture_limits = true;
  if (a.skip_memory_planning) config.options.skip_memory_planning = true;
  if (a.force_fp16) config.options.force_fp16 = true;
  if (!a.texture_limits.empty()) config.options.texture_limits = compiler::parse_texture_limits(a.texture_limits);
  for (const auto& s : a.input_shapes) {
    auto [name, dims] = compiler::parse_input_shape(s);
    if (!config.input_shapes.emplace(name, dims).second)
      throw compiler::OptionError(fmt::format("--input-shape given twice for '{}'", name));
  }
  for (const auto& s : a.dims) {
    if (auto range = compiler::parse_dim_range(s)) {
      if (config.dims.count(range->first) || config.dim_sizes.count(range->first) ||
          !config.dim_ranges.emplace(*range).second)
        throw compiler::OptionError(fmt::format("--dim given twice for '{}'", range->first));
      continue;
    }
    auto [name, values] = compiler::parse_dim(s);
    if (config.dims.count(name) || config.dim_sizes.count(name) || config.dim_ranges.count(name))
      throw compiler::OptionError(fmt::format("--dim given twice for '{}'", name));
    if (values.size() == 1) config.dims.emplace(name, values[0]);
    else config.dim_sizes.emplace(name, values);
  }
  for (const auto& s : a.input_values) {
    auto [name, values] = compiler::parse_input_value(s);
    if (!config.input_values.emplace(name, values).second)
      throw compiler::OptionError(fmt::format("--input-value given twice for '{}'", name));
  }
  if (a.max_seq_len < 0 || a.max_seq_len > (1 << 20))
    throw compiler::OptionError(fmt::format("--max-seq-len {}: expected 1..1048576", a.max_seq_len));
  config.max_seq_len = a.max_seq_len;
  if (!a.encoder.empty() && a.max_seq_len == 0)
    throw compiler::OptionError("--encoder goes with --max-seq-len N (the decoder step's cache; docs/encoder-decoder.md)");
  config.encoder = a.encoder;
  if ((a.bos || !a.eos.empty()) && a.max_seq_len == 0)
    throw compiler::OptionError("--bos and --eos go with --max-seq-len (they are a KV-cache program's metadata)");
  for (int64_t id : a.eos)
    if (id < 0) throw compiler::OptionError(fmt::format("--eos {}: a token id is >= 0", id));
  if (a.bos && *a.bos < 0) throw compiler::OptionError(fmt::format("--bos {}: a token id is >= 0", *a.bos));
  config.bos_id = a.bos;
  config.eos_ids = a.eos;
  config.dump_ir_after = a.dump_ir_after;
  for (const auto& name : a.skip_passes)
    if (std::string why = passes::check_skippable(name); !why.empty()) throw compiler::OptionError("--skip-pass: " + why);
  config.skip_passes = a.skip_passes;
  config.quantize = a.quantize;
  config.quantize_exclude = a.quantize_exclude;
  if (a.quantize_min_elements < 0) throw compiler::OptionError("--quantize-min-elements must be >= 0");
  config.quantize_min_elements = a.quantize_min_elements;
  config.ir_dump = [](const std::string& pass, const std::string& text) {
    fmt::print(stderr, "// ----- IR after {}\n{}", pass, text);
  };

  config.on_partition = [&a](const ir::Graph& g, const partitioner::Partition& p, const partitioner::DeviceLimits& l,
                             const std::vector<passes::PassContext::AttentionDecision>& attention) {
    if (!a.report.empty()) write_text_file(a.report, compiler::partition_report_json(g, p, l, attention));
    if (!a.report_dot.empty()) write_text_file(a.report_dot, compiler::partition_report_dot(g, p));
    if (!a.verbose) return;
    size_t delegated = 0;
    fmt::print(stderr, "{:<32} {:<44} {}\n", "node", "operator", "delegate");
    for (const auto& d : p.decisions) {
      fmt::print(stderr, "{:<32} {:<44} {}\n", d.node, d.op, d.delegate >= 0 ? std::to_string(d.delegate) : d.reason);
      delegated += d.delegate >= 0;
    }
    fmt::print(stderr, "delegated {} of {} nodes into {} delegate(s) (limits: {})\n", delegated, p.decisions.size(),
               p.delegates.size(), l.name);
  };
  // Progress: on request, or by default on a terminal unless other stderr output would interleave with the bar.
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  std::unique_ptr<tools::ProgressDisplay> progress;
  if (a.progress > 0 || (a.progress == 0 && tty && !a.verbose && a.dump_ir_after.empty())) {
    progress = std::make_unique<tools::ProgressDisplay>(tty ? tools::ProgressDisplay::Style::Bar
                                                            : tools::ProgressDisplay::Style::Lines);
    config.on_phase = [&progress](const compiler::PhaseEvent& e) { (*progress)(e); };
  }
  const auto start = std::chrono::steady_clock::now();
  // Not freed: the process ends soon after (finish()), and tearing down a large model's IR and
  // protobuf, which the stats keep alive, costs milliseconds.
  std::filesystem::path ptd;
  if (a.external_weights)
    ptd = a.external_weights_file.empty() ? serializer::default_ptd_path(a.output) : std::filesystem::path(a.external_weights_file);
  const compiler::CompileStats& stats =
      *new compiler::CompileStats(compiler::compile_file(a.model, a.output, config, ptd));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.reset();
  // Imported quantization (MatMulNBits) is reported without a recipe too.
  const std::string recipe = a.quantize.empty() ? "none" : a.quantize;
  const bool any_quant = !a.quantize.empty() || !stats.quantized_layers.empty();
  if (!a.quant_report.empty()) write_text_file(a.quant_report, compiler::quant_report_json(recipe, stats.quantized_layers));
  for (const std::string& note : stats.notes) fmt::print(stderr, "vkc: note: {}\n", note);

  if (a.verbose) {
    std::string phases;
    for (const auto& [name, secs] : stats.phase_seconds) phases += fmt::format(" {} {:.1f} ms", name, secs * 1e3);
    std::string pass_times;
    for (const auto& [name, secs] : stats.pass_seconds) pass_times += fmt::format(" {} {:.2f}", name, secs * 1e3);
    fmt::print(stderr, "passes (ms):{}\n", pass_times);
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
    if (!ptd.empty()) j["external_weights"] = {{"file", ptd.string()}, {"bytes", stats.external_bytes}};
    if (!stats.notes.empty()) j["notes"] = stats.notes;
    if (any_quant)
      j["quantized"] = nlohmann::ordered_json::parse(compiler::quant_report_json(recipe, stats.quantized_layers))["summary"];
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("wrote {} ({} bytes): {} delegate(s), {} runtime ops from {} ONNX nodes, {} constants, {:.3f} s\n",
               a.output, stats.output_bytes, stats.delegates, stats.runtime_nodes, stats.onnx_nodes, stats.named_data,
               seconds);
    if (!ptd.empty()) fmt::print("wrote {} ({} bytes): the constants, ExecuTorch's external data\n", ptd.string(), stats.external_bytes);
    if (any_quant) fmt::print("{}\n", compiler::quant_summary_line(recipe, stats.quantized_layers));
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
  compile->add_option("--input-value", c.input_values,
                      "bind an input to constant values, which then fold: NAME=V[,V...], e.g. sr=16000 (repeatable)");
  compile->add_option("--dim", c.dims, "fix a named symbolic dim everywhere: NAME=VALUE, e.g. sequence=128, or compile for several sizes the program picks between as it runs: NAME=V1,V2,..., or for any size in a range, one program that resizes as it runs: NAME=MIN..MAX (repeatable)");
  compile->add_option("--max-seq-len", c.max_seq_len,
                      "keep a decode-step graph's KV cache inside the program, N positions (docs/llm.md)");
  compile->add_option("--encoder", c.encoder,
                      "with --max-seq-len: the encoder of an encoder-decoder model; MODEL is its decoder step, and the "
                      "program gets an \"encoder\" method computing the step's cross-attention inputs once per input "
                      "(docs/encoder-decoder.md)")
      ->check(CLI::ExistingFile);
  compile->add_option("--bos", c.bos, "with --max-seq-len: the BOS id the program reports to ExecuTorch's LLM runner "
                                     "(default: from generation_config.json/config.json/the tokenizer beside the model)");
  compile->add_option("--eos", c.eos, "with --max-seq-len: the EOS id(s) the program reports, ID[,ID...] (default: as --bos)")
      ->delimiter(',');
  compile->add_flag("--print-pipeline", c.print_pipeline, "list the passes and exit");
  compile->add_option("--dump-ir-after", c.dump_ir_after, "print the IR after PASS (or 'all') to stderr");
  compile->add_option("--skip-pass", c.skip_passes, "do not run optional pass NAME, e.g. a fusion (repeatable)");
  compile->add_flag("--json", c.json, "print the result as JSON");
  compile->add_flag("-v,--verbose", c.verbose, "print the partition decisions to stderr");
  compile->add_flag("--progress,!--no-progress", c.progress,
                    "show progress on stderr (default: a bar when stderr is a terminal)");
  compile->add_option("--device", c.device, "built-in device profile NAME (vkc compile --list-devices)");
  compile->add_option("--device-file", c.device_file, "device profile YAML file")->check(CLI::ExistingFile);
  compile->add_option("--fallback", c.fallback, "what runs nodes no delegate can take: none (fail) or cpu")
      ->check(CLI::IsMember({"none", "cpu"}));
  compile->add_option("--report", c.report, "write the partition report (JSON) to FILE");
  compile->add_option("--report-dot", c.report_dot, "write the graph coloured by partition (Graphviz) to FILE");
  compile->add_flag("--list-devices", c.list_devices, "list the built-in device profiles and exit");
  CLI::Option* external_weights = compile->add_option("--external-weights", c.external_weights_file,
                      "write the constants to ExecuTorch's external data file FILE.ptd (default: OUT with .ptd), "
                      "which ExecuTorch's runtime and vkc run/inspect load beside the .pte")
      ->expected(0, 1);
  compile->add_flag("--no-embed-shaders", c.no_embed_shaders,
                    "do not store the SPIR-V of the shader variants the model uses in its payload");
  compile->add_option("--quantize", c.quantize,
                      "quantize weights: 8da4w[:G], int4-weight-only[:G], int8-weight-only, +-fp16/-embedding");
  compile->add_option("--quantize-min-elements", c.quantize_min_elements,
                      "linears with fewer weight elements stay fp (default 16384)");
  compile->add_option("--quantize-exclude", c.quantize_exclude, "keep layers whose node or weight name matches GLOB fp (repeatable)");
  compile->add_option("--quant-report", c.quant_report, "write the per-layer quantization report (JSON) to FILE");

  CLI::App* ops = app.add_subcommand("ops", "print the operator coverage (markdown, as in docs/op-coverage.md)");

  std::string inspect_path, inspect_max_size;
  std::vector<std::string> inspect_data;
  bool inspect_as_json = false, list_families = false;
  std::vector<std::string> require_delegates, require_families;
  CLI::App* inspect = app.add_subcommand("inspect", "describe a .pte: plans, delegates, operators, options, sizes");
  inspect->add_option("FILE", inspect_path, "the .pte to inspect");
  inspect->add_flag("--json", inspect_as_json, "print JSON");
  inspect->add_option("--data", inspect_data,
                      "the program's external data file FILE.ptd (repeatable; default: FILE.ptd beside the .pte)");
  inspect->add_option("--require-called-delegate", require_delegates, "fail unless a plan calls a BACKEND delegate");
  inspect->add_option("--require-family", require_families,
                      "fail unless called Vulkan delegates hold these families (comma-separated, repeatable)");
  inspect->add_option("--max-size", inspect_max_size, "fail if the file is larger than SIZE (e.g. 770MiB)");
  inspect->add_flag("--list-families", list_families, "list the operator families and exit");

  vkc::tools::ShadersArgs shaders_args;
  CLI::App* shaders = vkc::tools::add_shaders_command(app, shaders_args);
  vkc::tools::RunArgs run_args;
  CLI::App* run_cmd = vkc::tools::add_run_command(app, run_args);
  vkc::tools::TokenizeArgs tokenize_args;
  CLI::App* tokenize = vkc::tools::add_tokenize_command(app, tokenize_args);

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
    if (compile->parsed()) {
      c.external_weights = external_weights->count() > 0;
      return run_compile(c);
    }
    if (ops->parsed()) {
      fmt::print("{}", vkc::compiler::op_coverage_markdown());
      return 0;
    }
    if (shaders->parsed()) return vkc::tools::run_shaders_command(shaders_args);
    if (run_cmd->parsed()) return vkc::tools::run_run_command(run_args);
    if (tokenize->parsed()) return vkc::tools::run_tokenize_command(tokenize_args);
    if (list_families) {
      fmt::print("{}", vkc::compiler::list_families_text());
      return 0;
    }
    if (inspect_path.empty()) throw vkc::compiler::OptionError("inspect: FILE is required");
    vkc::compiler::InspectGates gates;
    try {
      gates = vkc::compiler::make_gates(require_delegates, require_families, inspect_max_size);
    } catch (const std::invalid_argument& e) {
      throw vkc::compiler::OptionError(e.what());
    }
    const auto report = vkc::compiler::inspect_file(
        inspect_path, std::vector<std::filesystem::path>(inspect_data.begin(), inspect_data.end()));
    fmt::print("{}", inspect_as_json ? vkc::compiler::inspect_json(report) : vkc::compiler::inspect_text(report));
    if (const auto failed = vkc::compiler::check_gates(report, gates); !failed.empty()) {
      std::fflush(stdout);
      fmt::print(stderr, "vkc: error: {}: {}\n", inspect_path, fmt::join(failed, "; "));
      return 1;
    }
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
