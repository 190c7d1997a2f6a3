#include "vkc/api/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>

#include "error_diagnostic.h"
#include "vkc/compiler/driver.h"
#include "vkc/compiler/quant_report.h"
#include "vkc/passes/quantize.h"

namespace vkc {
namespace {

static_assert(compiler::kNumPhases == static_cast<size_t>(kNumPhases), "vkc::Phase must list the driver's phases");

PartitionReport report_of(const partitioner::Partition& p, std::string limits) {
  PartitionReport r;
  r.device_limits = std::move(limits);
  for (const partitioner::NodeDecision& d : p.decisions) {
    r.nodes.push_back({d.node, d.op, d.delegate, d.reason});
    ++(d.delegate >= 0 ? r.delegated : r.rejected);
  }
  for (const partitioner::Delegate& d : p.delegates)
    r.delegates.push_back({d.nodes.size(), d.inputs.size(), d.outputs.size(), d.num_memory_objects});
  return r;
}

CompileSummary summary_of(const compiler::CompileStats& s) {
  return {s.onnx_nodes, s.runtime_nodes, s.delegates, s.named_data, s.output_bytes, s.external_bytes, s.phase_seconds};
}

/// One error per rejected node, after the one-line summary the CLI prints.
void add_rejected_nodes(const PartitionReport& p, std::vector<Diagnostic>& out) {
  for (const NodeReport& n : p.nodes)
    if (n.delegate < 0)
      out.push_back({Severity::Error, fmt::format("node '{}' ({}): {}", n.name, n.op, n.reason), n.name, n.op});
}

CompileResult run(const compiler::ModelSource& source, const std::filesystem::path* out_file,
                  const CompileOptions& options, const ProgressCallback& progress) {
  CompileResult r;
  r.diagnostics = check_options(options);
  if (has_errors(r.diagnostics)) return r;

  compiler::CompileConfig config;
  config.options = *options.payload_options();
  config.input_shapes = options.input_shapes;
  config.dims = options.dims;
  config.dim_sizes = options.dim_sizes;
  config.dim_ranges = options.dim_ranges;
  config.input_values = options.input_values;
  config.max_seq_len = options.max_seq_len;
  config.encoder = options.encoder;
  config.bos_id = options.bos_id;
  config.eos_ids = options.eos_ids;
  config.dump_ir_after = options.dump_ir_after;
  config.skip_passes = options.skip_passes;
  config.ir_dump = [&r](const std::string& pass, const std::string& text) { r.ir_dumps.emplace_back(pass, text); };
  if (options.device_profile) config.device = partitioner::builtin_device_profile(*options.device_profile);
  config.cpu_fallback = options.cpu_fallback;
  config.embed_shaders = options.embed_shaders;
  config.quantize = options.quantization_recipe.value_or("");
  config.quantize_exclude = options.quantize_exclude;
  config.quantize_min_elements = options.quantize_min_elements;
  config.on_partition = [&r](const ir::Graph&, const partitioner::Partition& p, const partitioner::DeviceLimits& l,
                             const std::vector<passes::PassContext::AttentionDecision>& attention) {
    r.partition = report_of(p, l.name);
    for (const auto& a : attention) r.partition.attention.push_back({a.node, a.form, a.why});
  };
  if (progress) {
    config.on_phase = [&progress](const compiler::PhaseEvent& e) {
      if (e.update) return;  // the API reports phases only, on the compiling thread
      progress({static_cast<Phase>(e.index), e.finished, e.seconds,
                static_cast<double>(e.index + (e.finished ? 1 : 0)) / kNumPhases});
    };
  }
  compiler::PteSink sink;
  if (out_file)
    sink.file = *out_file;
  else
    sink.bytes = &r.pte;
  if (!options.external_weights.empty()) {
    if (out_file)
      sink.ptd_file = options.external_weights;
    else
      sink.ptd_bytes = &r.ptd;
  }

  try {
    const compiler::CompileStats stats = compiler::compile(source, sink, config);
    r.summary = summary_of(stats);
    for (const std::string& note : stats.notes) r.diagnostics.push_back({Severity::Note, note, {}, {}});
    if (!config.quantize.empty() || !stats.quantized_layers.empty())
      r.quant_report = compiler::quant_report_json(config.quantize.empty() ? "none" : config.quantize, stats.quantized_layers);
    r.ok = true;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    r.diagnostics.push_back(detail::error_from_message(e.what()));
    if (r.partition.rejected > 0) {
      r.diagnostics.back().node.clear();  // the summary names several nodes; each follows on its own
      r.diagnostics.back().op.clear();
      add_rejected_nodes(r.partition, r.diagnostics);
    }
  } catch (...) {
    r.diagnostics.push_back(detail::error_from_message("compile failed with an unknown exception"));
  }
  if (!r.ok) r.pte.clear(), r.ptd.clear();
  return r;
}

}  // namespace

std::string_view to_string(Phase phase) {
  const auto i = static_cast<size_t>(phase);
  return i < compiler::kNumPhases ? compiler::kPhases[i] : "unknown";
}

std::string CompileResult::error() const {
  for (const Diagnostic& d : diagnostics)
    if (d.severity == Severity::Error) return d.message;
  return {};
}

std::vector<Diagnostic> check_options(const CompileOptions& options) {
  std::vector<Diagnostic> out;
  auto error = [&out](std::string message) { out.push_back({Severity::Error, std::move(message), {}, {}}); };
  if (options.device_profile) {
    const auto names = partitioner::builtin_device_profile_names();
    if (std::find(names.begin(), names.end(), *options.device_profile) == names.end())
      error(fmt::format("no built-in device profile '{}' (have: {})", *options.device_profile, fmt::join(names, ", ")));
  }
  if (options.quantization_recipe) {
    try {
      (void)passes::parse_quant_recipe(*options.quantization_recipe);
    } catch (const std::invalid_argument& e) {
      error(e.what());
    }
  } else if (!options.quantize_exclude.empty()) {
    error("quantize_exclude needs a quantization_recipe");
  }
  for (const auto& [name, sizes] : options.dim_sizes) {
    if (options.dims.count(name)) error(fmt::format("dim '{}' is in both dims and dim_sizes", name));
    if (sizes.empty()) error(fmt::format("dim_sizes: '{}' lists no size", name));
    for (int64_t v : sizes)
      if (v <= 0) error(fmt::format("dim_sizes: '{}' has size {}; sizes are positive", name, v));
  }
  for (const auto& [name, range] : options.dim_ranges) {
    if (options.dims.count(name) || options.dim_sizes.count(name))
      error(fmt::format("dim '{}' is in dim_ranges and in dims or dim_sizes", name));
    if (range.first <= 0 || range.second <= range.first)
      error(fmt::format("dim_ranges: '{}' is {}..{}; a range is MIN..MAX with 0 < MIN < MAX", name, range.first,
                        range.second));
  }
  std::string why;
  if (!options.payload_options(&why)) error(why);
  if (options.texture_limits && options.small_texture_limits.value_or(false))
    out.push_back({Severity::Warning, "texture_limits and small_texture_limits are both set; texture_limits wins",
                   {}, {}});
  return out;
}

CompileResult compile(const std::filesystem::path& model, const std::filesystem::path& out,
                      const CompileOptions& options, const ProgressCallback& progress) {
  compiler::ModelSource source;
  source.file = model;
  return run(source, &out, options, progress);
}

CompileResult compile(const std::filesystem::path& model, const CompileOptions& options,
                      const ProgressCallback& progress) {
  compiler::ModelSource source;
  source.file = model;
  return run(source, nullptr, options, progress);
}

CompileResult compile(std::span<const uint8_t> model, const std::filesystem::path& base_dir,
                      const CompileOptions& options, const ProgressCallback& progress) {
  compiler::ModelSource source;
  source.bytes = model;
  source.base_dir = base_dir;
  source.in_memory = true;
  return run(source, nullptr, options, progress);
}

}  // namespace vkc
