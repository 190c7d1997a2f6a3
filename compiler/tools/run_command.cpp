#include "run_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "tensor_file.h"
#include "vkc/compiler/option_parsing.h"
#include "vkc/runtime/compare.h"
#include "vkc/runtime/executor.h"

namespace vkc::tools {
namespace {

namespace fs = std::filesystem;
using kernels::HostTensor;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A tensor file given for input `index`, converted to the dtype the program declares.
HostTensor load_input(const fs::path& file, const runtime::TensorSpec& spec, size_t index) {
  HostTensor t = file.extension() == ".pb" ? read_tensor_pb(file) : read_tensor_bin(file, spec.dtype, spec.shape);
  if (t.dtype != spec.dtype)
    throw compiler::OptionError(fmt::format("input {} ({}): {} given, the program takes {}", index, file.string(),
                                            ir::dtype_name(t.dtype), ir::dtype_name(spec.dtype)));
  if (spec.dynamic && spec.accepts(t.shape)) return t;  // one of the sizes a dynamic-bound input takes
  if (t.numel() != spec.numel())
    throw compiler::OptionError(fmt::format("input {} ({}): [{}] given, the program takes [{}]{}", index,
                                            file.string(), fmt::join(t.shape, ","), fmt::join(spec.shape, ","),
                                            spec.dynamic ? " or smaller" : ""));
  t.shape = spec.shape;  // same elements; e.g. [N] for [1, N]
  return t;
}

// The input NAME (an ONNX input name the program keeps, or an index) names; `what` prefixes errors.
size_t input_index(const std::string& name, const std::vector<runtime::TensorSpec>& specs, const std::string& what) {
  size_t index = 0;
  if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) {
    index = std::stoul(name);
  } else {  // an ONNX input name, which the program keeps (vkc.io_names)
    auto it = std::find_if(specs.begin(), specs.end(), [&](const runtime::TensorSpec& t) { return t.name == name; });
    if (it == specs.end()) {
      std::vector<std::string> names;
      for (const auto& t : specs) names.push_back(t.name.empty() ? "?" : t.name);
      throw compiler::OptionError(
          specs.empty() || specs[0].name.empty()
              ? fmt::format("{}: this .pte keeps no input names; name inputs by index (0..{})", what, specs.size() - 1)
              : fmt::format("{}: no input '{}' (inputs: {})", what, name, fmt::join(names, ", ")));
    }
    index = static_cast<size_t>(it - specs.begin());
  }
  if (index >= specs.size()) throw compiler::OptionError(fmt::format("{}: the program has {} input(s)", what, specs.size()));
  return index;
}

}  // namespace

std::vector<HostTensor> make_inputs(const RunArgs& a, const std::vector<runtime::TensorSpec>& specs) {
  std::vector<std::optional<HostTensor>> given(specs.size());
  size_t next = 0;
  for (const std::string& s : a.inputs) {
    size_t index = next;
    std::string file = s;
    if (auto eq = s.find('='); eq != std::string::npos) {
      file = s.substr(eq + 1);
      index = input_index(s.substr(0, eq), specs, "--input " + s);
    }
    if (index >= specs.size())
      throw compiler::OptionError(fmt::format("--input {}: the program has {} input(s)", s, specs.size()));
    if (given[index]) throw compiler::OptionError(fmt::format("--input: input {} given twice", index));
    given[index] = load_input(file, specs[index], index);
    next = index + 1;
  }
  // --input-shape: the shape a --random input takes (a dynamic-bound input, any within its bound).
  std::vector<std::optional<std::vector<int64_t>>> shapes(specs.size());
  for (const std::string& s : a.input_shapes) {
    auto [name, dims] = compiler::parse_input_shape(s);
    const size_t index = input_index(name, specs, "--input-shape " + s);
    if (!specs[index].accepts(dims))
      throw compiler::OptionError(fmt::format("--input-shape {}: input {} takes [{}]{}", s, index,
                                              fmt::join(specs[index].shape, ","), specs[index].dynamic ? " or smaller" : ""));
    shapes[index] = dims;
  }
  OrtRandom rng(a.random_seed.value_or(0));
  std::vector<HostTensor> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (given[i]) {
      out.push_back(*given[i]);
      continue;
    }
    // An ONNX test-data folder holds the inputs beside the expected outputs.
    const fs::path from_expect = a.expect_dir.empty() ? fs::path() : fs::path(a.expect_dir) / fmt::format("input_{}.pb", i);
    if (!from_expect.empty() && !a.random_seed && fs::exists(from_expect)) out.push_back(load_input(from_expect.string(), specs[i], i));
    else if (a.random_seed) out.push_back(rng.tensor(specs[i].dtype, shapes[i].value_or(specs[i].shape)));
    else throw compiler::OptionError(fmt::format("input {} is not given (use --input FILE, --random SEED, or --expect DIR holding input_<i>.pb)", i));
  }
  return out;
}

namespace {

// output_<i>.pb, else output_<i>.bin (read as the program's dtype and shape).
std::optional<HostTensor> expected_output(const fs::path& dir, size_t i, const HostTensor& got) {
  const fs::path pb = dir / fmt::format("output_{}.pb", i), bin = dir / fmt::format("output_{}.bin", i);
  if (fs::exists(pb)) return read_tensor_pb(pb);
  if (fs::exists(bin)) return read_tensor_bin(bin, got.dtype, got.shape);
  return std::nullopt;
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunArgs& a) {
  CLI::App* run = app.add_subcommand("run", "execute a .pte on a runtime backend and check its outputs");
  run->add_option("FILE", a.pte, "the .pte to run")->required();
  run->add_option("--backend", a.backend,
                  "cpu (the reference kernels) or vulkan (a Vulkan device; VKC_VULKAN_VALIDATION=1: validation layer)")
      ->capture_default_str();
  run->add_option("--data", a.data,
                  "the program's external data file FILE.ptd (repeatable; default: FILE.ptd beside the .pte)");
  run->add_option("--input", a.inputs, "an input tensor: FILE.pb|FILE.bin, NAME=FILE (the ONNX input name) or INDEX=FILE (repeatable, in order)");
  run->add_option("--random", a.random_seed, "fill inputs not given with seeded values (as ort-reference.js)");
  run->add_option("--input-shape", a.input_shapes, "the shape of a --random input, NAME|INDEX=D1xD2x... (an input "
                                                  "with dynamic dims takes any shape within its bound; repeatable)");
  run->add_option("--generate", a.generate, "generate N tokens greedily after --prompt-ids (programs compiled with "
                                            "--max-seq-len; docs/llm.md)");
  run->add_option("--prompt-ids", a.prompt_ids, "the prompt's token ids for --generate: 1,2,3");
  run->add_option("--tokenizer", a.tokenizer, "with --prompt: tokenizer.json, a SentencePiece tokenizer.model, or the "
                                              "model's folder holding one (docs/llm.md)");
  run->add_option("--prompt", a.prompt, "generate from this text (needs --tokenizer); the text streams to stdout");
  run->add_option("--max-new-tokens", a.max_new_tokens, "with --prompt: at most N new tokens (default: until EOS or "
                                                        "the cache is full)")->check(CLI::PositiveNumber);
  run->add_option("--temperature", a.temperature, "sampling temperature; 0 (the default) is greedy")->check(CLI::Range(0.0, 100.0));
  run->add_option("--top-p", a.top_p, "nucleus sampling: keep the likeliest tokens up to this probability mass")
      ->check(CLI::Range(0.0, 1.0));
  run->add_option("--top-k", a.top_k, "keep the K likeliest tokens when sampling (0: all)")->check(CLI::NonNegativeNumber);
  run->add_option("--seed", a.seed, "the sampler's seed (the same seed gives the same tokens)");
  run->add_option("--eos", a.eos, "stop at these ids, ID[,ID...] (default: the program's get_eos_ids, else the "
                                  "tokenizer's)")->delimiter(',');
  run->add_flag("--no-special-tokens", a.no_special_tokens, "with --prompt: add no BOS (or other special tokens the "
                                                            "tokenizer adds) to the prompt");
  run->add_flag("--chat", a.chat, "with --prompt: wrap it in the tokenizer's chat template as a user message");
  run->add_option("--expect", a.expect_dir, "compare with DIR/output_<i>.pb (or .bin); inputs not given are read from DIR/input_<i>.pb");
  run->add_option("--save", a.save_dir, "write an ONNX test-data folder: DIR/input_<i>.pb (the inputs used) and output_<i>.pb");
  run->add_option("--rtol", a.rtol, "relative tolerance")->capture_default_str();
  run->add_option("--atol", a.atol, "absolute tolerance")->capture_default_str();
  run->add_option("--repeat", a.repeat, "run N times; timing reports first, best and mean")->check(CLI::PositiveNumber);
  run->add_flag("--json", a.json, "print JSON");
  run->add_option("--profile", a.profile,
                  "with --backend vulkan, GPU time from timestamps on stderr when the program is unloaded: kernels "
                  "(each dispatch's, a barrier after each, and the sum per shader) or step (each run's, barriers as "
                  "they are, beside the host's wall time)")
      ->check(CLI::IsMember({"kernels", "step"}));
  return run;
}

int run_run_command(const RunArgs& a) {
  if (!a.profile.empty()) {
    if (a.backend != "vulkan") throw compiler::OptionError("--profile needs --backend vulkan");
    // The Vulkan backend reads its profiling mode when it records a program (docs/runtime.md).
    ::setenv("VKC_VULKAN_PROFILE", a.profile == "kernels" ? "1" : "run", 1);
  }
  if (a.prompt) return run_prompt(a);
  if (a.generate >= 0) return run_generate(a);
  if (!a.prompt_ids.empty()) throw compiler::OptionError("--prompt-ids needs --generate N");
  if (!a.tokenizer.empty() || a.max_new_tokens || a.chat) throw compiler::OptionError("--tokenizer, --max-new-tokens and --chat go with --prompt TEXT");
  auto t0 = Clock::now();
  std::unique_ptr<runtime::Backend> backend = runtime::make_backend(a.backend);
  runtime::Executor exec = runtime::Executor::load(a.pte, *backend, "forward",
                                                   std::vector<std::filesystem::path>(a.data.begin(), a.data.end()));
  const double load_ms = ms_since(t0);
  const std::vector<HostTensor> inputs = make_inputs(a, exec.inputs());

  std::vector<HostTensor> outputs;
  std::vector<double> times;
  for (int r = 0; r < std::max(1, a.repeat); ++r) {
    t0 = Clock::now();
    outputs = exec.run(inputs);
    times.push_back(ms_since(t0));
  }
  const double best = *std::min_element(times.begin(), times.end());
  double mean = 0;
  for (double t : times) mean += t / static_cast<double>(times.size());

  bool all_pass = true;
  nlohmann::ordered_json j = {{"file", a.pte}, {"backend", a.backend}, {"delegates", exec.num_delegates()}};
  j["outputs"] = nlohmann::json::array();
  std::string text = fmt::format("{} on {}: {} delegate(s)\n", a.pte, a.backend, exec.num_delegates());
  if (!a.save_dir.empty()) {
    fs::create_directories(a.save_dir);
    for (size_t i = 0; i < inputs.size(); ++i)
      write_tensor_pb(fs::path(a.save_dir) / fmt::format("input_{}.pb", i), inputs[i], exec.inputs().at(i).name);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor& out = outputs[i];
    const runtime::Summary s = runtime::summarize(out);
    const std::string& name = exec.outputs().at(i).name;
    nlohmann::ordered_json o = {{"index", i},
                                {"name", name},
                                {"dtype", std::string(ir::dtype_name(out.dtype))},
                                {"shape", out.shape},
                                {"min", s.min},
                                {"max", s.max},
                                {"mean", s.mean},
                                {"nan", s.nan},
                                {"inf", s.inf}};
    text += fmt::format("output {}{}: {}  min {:.6g}  max {:.6g}  mean {:.6g}{}\n", i,
                        name.empty() ? "" : " (" + name + ")", runtime::describe(out), s.min,
                        s.max, s.mean, s.nan || s.inf ? fmt::format("  ({} NaN, {} inf)", s.nan, s.inf) : "");
    if (!a.save_dir.empty()) write_tensor_pb(fs::path(a.save_dir) / fmt::format("output_{}.pb", i), out, name);
    if (a.expect_dir.empty()) {
      j["outputs"].push_back(o);
      continue;
    }
    const std::optional<HostTensor> want = expected_output(a.expect_dir, i, out);
    if (!want) {
      all_pass = false;
      text += fmt::format("  expected: no output_{}.pb or .bin in {}: fail\n", i, a.expect_dir);
      o["pass"] = false;
    } else {
      const runtime::Comparison c = runtime::compare(out, *want, a.rtol, a.atol);
      all_pass = all_pass && c.pass();
      text += fmt::format("  vs expected {}: max abs err {:.3g}, max rel err {:.3g}, {} mismatch(es): {}\n",
                          runtime::describe(*want), c.max_abs, c.max_rel, c.mismatches, c.pass() ? "pass" : "FAIL");
      o["max_abs_err"] = c.max_abs;
      o["max_rel_err"] = c.max_rel;
      o["mismatches"] = c.mismatches;
      o["pass"] = c.pass();
    }
    j["outputs"].push_back(o);
  }
  text += fmt::format("time: load {:.2f} ms, run first {:.2f} ms, best {:.2f} ms, mean {:.2f} ms ({} run(s))\n",
                      load_ms, times.front(), best, mean, times.size());
  j["load_ms"] = load_ms;
  j["run_ms"] = {{"first", times.front()}, {"best", best}, {"mean", mean}, {"runs", times.size()}};
  if (!a.expect_dir.empty()) {
    j["pass"] = all_pass;
    text += fmt::format("result: {} (rtol {}, atol {})\n", all_pass ? "pass" : "FAIL", a.rtol, a.atol);
  }
  fmt::print("{}", a.json ? j.dump(2) + "\n" : text);
  return all_pass ? 0 : 1;
}

}  // namespace vkc::tools
