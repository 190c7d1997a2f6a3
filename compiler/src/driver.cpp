#include "vkc/compiler/driver.h"
#include "branch_programs.h"
#include "dynamic_programs.h"
#include "encoder_decoder.h"
#include "size_variants.h"
#include "vkc/serializer/io_names.h"

#include <fmt/format.h>

#include <algorithm>

#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "vkc/compiler/onnx_importer.h"
#include "vkc/ir/printer.h"
#include "vkc/passes/pipeline.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/byte_progress.h"
#include "vkc/serializer/constant_methods.h"
#include "vkc/tokenizer/tokenizer.h"
#include "llm_metadata.h"
#include "vkc/serializer/embed_shaders.h"
#include "vkc/shaders/bundle.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/program_methods.h"
#include "vkc/serializer/ptd.h"
#include "vkc/serializer/pte_writer.h"

namespace vkc::compiler {
namespace {

// Constants of at least this many bytes are hashed (for their named-data keys) as the writers
// write them, not before: a model's weights are then read once (serializer's deferred keys).
constexpr uint64_t kDeferKeysFrom = uint64_t{1} << 20;

// The rejected nodes, the causes first: a node refused for a shape or dtype left unknown by one
// upstream (an If chosen at run time, say) comes after the nodes refused for their own reasons.
std::string rejected_list(const partitioner::Partition& p) {
  const auto follows = [](const std::string& reason) {
    for (const char* mark : {"static shape", "not static", "is unknown", "dtype undef", "no static rank"})
      if (reason.find(mark) != std::string::npos) return true;
    return false;
  };
  std::string s;
  size_t shown = 0;
  for (const bool consequences : {false, true})
    for (const auto& d : p.decisions) {
      if (d.delegate >= 0 || follows(d.reason) != consequences) continue;
      if (shown++ == 5) return s + fmt::format("; and {} more", p.num_rejected() - 5);
      s += fmt::format("{}node '{}' ({}): {}", s.empty() ? "" : "; ", d.node, d.op, d.reason);
    }
  return s;
}

// The Vulkan delegate needs static shapes: name the inputs still symbolic, with a fix.
void require_static_inputs(const ir::Graph& g, int64_t max_seq_len) {
  for (const ir::Value* v : g.inputs) {
    if (v->shape().is_static()) continue;
    // A decode step's token count: the two programs --max-seq-len makes of it.
    const auto& dims = v->shape().dims;
    if (max_seq_len > 0 && ir::is_integer(v->dtype()) && dims.size() == 2 && !dims[1].value && !dims[1].symbol.empty())
      throw CompileError(fmt::format(
          "--max-seq-len: input '{}' {} has a symbolic length '{}': give --dim {}=1 for decode steps, or --dim "
          "{}=1..S for one program that takes prefill chunks of up to S tokens and decode steps",
          v->name(), v->shape().str(), dims[1].symbol, dims[1].symbol, dims[1].symbol));
    // Name each symbolic dim with a value that suits it: 1 for a batch, a typical length otherwise.
    auto suggestion = [](const ir::Dim& d) {
      std::string lower = d.symbol;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      const bool batch = lower.find("batch") != std::string::npos || lower == "n" || lower == "b";
      return std::string(batch ? "1" : "N");
    };
    std::string fixes, example;
    for (const ir::Dim& d : v->shape().dims) {
      example += (example.empty() ? "" : "x") + (d.value ? std::to_string(*d.value) : suggestion(d));
      if (!d.value)
        fixes += fmt::format("{}--dim {}={}", fixes.empty() ? "" : " ", d.symbol.empty() ? "?" : d.symbol, suggestion(d));
    }
    const bool unnamed = fixes.find("--dim ?") != std::string::npos;
    const bool has_n = example.find('N') != std::string::npos;
    throw CompileError(fmt::format("input '{}' has dynamic shape {}; fix {} with {}{}{}", v->name(), v->shape().str(),
                                   unnamed ? "it" : "its dims", unnamed ? "" : fixes + " or ",
                                   fmt::format("--input-shape {}={}", v->name(), example),
                                   has_n ? " (N: the size to compile for, e.g. a sequence length)" : ""));
  }
}

// The shader library compiled into vkc, parsed once.
const codegen::ShaderLibrary& builtin_shader_library() {
  static const codegen::ShaderLibrary lib = [] {
    const auto bytes = shaders::embedded_bundle();
    return codegen::ShaderLibrary::from_static_bytes(bytes, "built-in bundle");
  }();
  return lib;
}

}  // namespace

partitioner::DeviceLimits limits_for(const serializer::CompileOptions& o,
                                     const std::optional<partitioner::DeviceProfile>& device) {
  partitioner::DeviceLimits l = device ? device->limits : partitioner::DeviceLimits::default_limits();
  if (o.texture_limits) {
    l.texture = {o.texture_limits->x, o.texture_limits->y, o.texture_limits->z};
    l.name = fmt::format("texture_limits {},{},{}", l.texture[0], l.texture[1], l.texture[2]);
  } else if (o.small_texture_limits.value_or(false)) {
    l.texture = partitioner::DeviceLimits::small_texture().texture;
    l.name = "small-texture";
  }
  return l;
}

// A KV-cache program gets the metadata methods ExecuTorch's LLM runner reads (llm_metadata.h);
// BOS/EOS from --bos/--eos, else from the model's JSON files beside it.
void add_llm_metadata(serializer::Program& program, const ModelSource& model, const CompileConfig& config,
                      std::vector<std::string>& notes) {
  LlmTokenIds ids{config.bos_id, config.eos_ids, "--bos/--eos"};
  const std::filesystem::path dir = !model.file.empty() ? model.file.parent_path() : model.base_dir;
  if ((!ids.bos || ids.eos.empty()) && !model.in_memory) {
    try {
      const tokenizer::ModelTokens found = tokenizer::read_model_config(dir.empty() ? "." : dir);
      if (!ids.bos && found.bos) ids.bos = found.bos, ids.source = "the model's JSON files";
      if (ids.eos.empty() && !found.eos.empty()) ids.eos = found.eos, ids.source = "the model's JSON files";
    } catch (const tokenizer::TokenizerError& e) {
      throw CompileError(e.what());
    }
  }
  std::string misfit;
  const auto methods = llm_metadata(program, config.max_seq_len, ids, misfit);
  if (methods.empty()) {
    notes.push_back(fmt::format("ExecuTorch's LLM runner cannot run this program: {}", misfit));
    return;
  }
  serializer::add_constant_methods(program, methods);
  std::string listed;
  for (const auto& m : methods) listed += fmt::format("{}{} {}", listed.empty() ? "" : ", ", m.name, serializer::describe(m.value));
  notes.push_back(fmt::format("LLM runner metadata: {}{}", listed,
                              ids.eos.empty() ? "; no EOS id known (give --eos ID, or put generation_config.json or "
                                                "the tokenizer beside the model): generation stops only at its budget"
                                              : ""));
}

CompileStats compile(const ModelSource& model, const PteSink& out, const CompileConfig& config) {
  passes::QuantConfig quant;
  try {
    if (!config.quantize.empty()) quant.recipe = passes::parse_quant_recipe(config.quantize);
  } catch (const std::invalid_argument& e) {
    throw CompileError(e.what());
  }
  quant.exclude = config.quantize_exclude;
  quant.min_elements = config.quantize_min_elements;
  quant.kept_packed_bytes = config.quantize_kept_packed_bytes;
  // A "-fp16" recipe is force_fp16, recorded in the payload exactly like the flag.
  serializer::CompileOptions options = config.options;
  if (quant.recipe.force_fp16) options.force_fp16 = true;
  if (config.device && !config.device->fp16 && options.force_fp16.value_or(false))
    throw CompileError(fmt::format("device '{}' has no fp16 support; --force-fp16 cannot be used", config.device->name));
  if (!config.dump_ir_after.empty() && config.dump_ir_after != "all" && !passes::find_pass(config.dump_ir_after))
    throw CompileError(fmt::format("--dump-ir-after: no pass named '{}' (see --print-pipeline)", config.dump_ir_after));
  for (const std::string& name : config.skip_passes)
    if (std::string why = passes::check_skippable(name); !why.empty()) throw CompileError("--skip-pass: " + why);
  CompileStats stats;
  auto phase_start = std::chrono::steady_clock::now();
  auto begin_phase = [&] {
    if (config.on_phase) config.on_phase({stats.phase_seconds.size(), false, 0.0});
  };
  // Byte counts of the serializer's long loops, as updates of the current phase.
  std::optional<serializer::ByteProgressScope> byte_progress;
  if (config.on_phase)
    byte_progress.emplace([&config, &stats](uint64_t done, uint64_t total) {
      config.on_phase({stats.phase_seconds.size(), false, 0.0, true, done, total});
    });
  auto end_phase = [&] {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - phase_start).count();
    const size_t index = stats.phase_seconds.size();
    stats.phase_seconds.emplace_back(kPhases[index], seconds);
    phase_start = now;
    if (config.on_phase) config.on_phase({index, true, seconds});
  };
  // The shader library is indexed on a second thread while the model is imported; a failure
  // there is left for the serializer's own call to report.
  std::jthread library_loader;
  if (config.embed_shaders)
    library_loader = std::jthread([] {
      try {
        (void)builtin_shader_library();
      } catch (...) {
      }
    });
  ImportOptions import_options;
  import_options.input_shapes = config.input_shapes;
  import_options.dims = config.dims;
  import_options.input_values = config.input_values;
  import_options.kv_cache_len = config.max_seq_len;
  const partitioner::PartitionOptions popts = [&] {
    partitioner::PartitionOptions p;
    p.limits = limits_for(options, config.device);
    p.skip_memory_planning = options.skip_memory_planning.value_or(false);
    p.size_independent_layouts = !config.dim_ranges.empty();
    return p;
  }();
  // --encoder: the encoder's graph through the pipeline, for the sizes each compile of the decoder
  // step uses (a --dim range compiles both at every probe size); the step's context computation
  // moves into it before either is partitioned (encoder_decoder.h).
  std::set<std::string> encoder_unmatched, decoder_unmatched;  // --dim names a graph does not have
  if (!config.encoder.empty()) {
    if (config.max_seq_len <= 0) throw CompileError("--encoder needs --max-seq-len N (the decoder step's cache)");
    if (!config.dim_sizes.empty())
      throw CompileError("--encoder: --dim with several sizes is not supported (a range, --dim NAME=MIN..MAX, is)");
  }
  auto compile_encoder = [&](const detail::DimSizes& sizes, detail::Part& part) {
    ImportOptions eo = import_options;
    eo.dims.insert(sizes.begin(), sizes.end());
    eo.kv_cache_len = 0;
    eo.unmatched_dims = &encoder_unmatched;
    part.encoder = import_onnx_file(config.encoder, eo);
    require_static_inputs(*part.encoder, 0);
    passes::PassContext ectx;
    ectx.force_fp16 = options.force_fp16.value_or(false);
    ectx.max_texture_width = popts.limits.texture[0];
    ectx.quant = quant;
    ectx.sizes_resize = !config.dim_ranges.empty();
    passes::PipelineHooks ehooks;
    ehooks.skip = config.skip_passes;
    try {
      passes::run_pipeline(*part.encoder, ectx, ehooks);
    } catch (const passes::PassError& e) {
      throw CompileError(fmt::format("--encoder {}: {}", config.encoder.string(), e.what()));
    }
    part.encoder_not_lowered = std::move(ectx.not_lowered);
  };
  // One compile of the model as far as partitioning; the first (`timed`) reports its phases and
  // pass times. A run-time If over branches of different shapes leaves open conditions: the model
  // is then compiled again per branch with each bound (branch_programs.h).
  bool reported = false;  // on_partition: the first whole program only
  auto compile_part = [&](const detail::Bindings& bindings, const std::string* output, bool timed,
                          const detail::DimSizes& sizes) {
    if (timed) begin_phase();
    detail::Part part;
    const bool encoder = !config.encoder.empty();
    if (encoder) compile_encoder(sizes, part);
    ImportOptions io = import_options;
    io.dims.insert(sizes.begin(), sizes.end());
    if (encoder) io.unmatched_dims = &decoder_unmatched;
    part.graph = model.in_memory ? import_onnx_bytes(model.bytes, model.base_dir, io) : import_onnx_file(model.file, io);
    for (const std::string& name : decoder_unmatched)
      if (encoder_unmatched.count(name))
        throw CompileError(fmt::format("--dim {}: neither the decoder step nor the encoder has an input dim named '{}'",
                                       name, name));
    ir::Graph& g = *part.graph;
    require_static_inputs(g, config.max_seq_len);
    detail::bind_conditions(g, bindings);
    const auto conditions = detail::if_conditions(g);
    if (output) {
      ir::Value* v = g.find_value(*output);
      if (!v) throw CompileError(fmt::format("If condition '{}' is not in the model as imported", *output));
      g.outputs = {detail::condition_output(g, v)};
    }
    if (timed) {
      end_phase();
      begin_phase();
      stats.onnx_nodes = g.num_nodes();
    }
    passes::PassContext ctx;
    ctx.force_fp16 = options.force_fp16.value_or(false);
    ctx.max_seq_len = config.max_seq_len;
    ctx.sizes_resize = !config.dim_ranges.empty();
    ctx.max_texture_width = popts.limits.texture[0];
    ctx.quant = quant;
    passes::PipelineHooks hooks;
    hooks.skip = config.skip_passes;
    if (timed && !config.dump_ir_after.empty() && config.ir_dump) {
      hooks.after_pass = [&](const passes::PassInfo& p, const ir::Graph& graph) {
        if (config.dump_ir_after == "all" || config.dump_ir_after == p.name)
          config.ir_dump(std::string(p.name), ir::print_graph(graph));
      };
    }
    try {
      passes::run_pipeline(g, ctx, hooks);
    } catch (const passes::PassError& e) {
      throw CompileError(e.what());
    }
    if (timed) {
      stats.pass_seconds = ctx.pass_seconds;
      end_phase();
      begin_phase();
    }
    if (stats.quantized_layers.empty()) stats.quantized_layers = std::move(ctx.quant_report);
    part.notes = std::move(ctx.notes);
    part.attention = std::move(ctx.attention);
    part.open_conditions = detail::open_conditions(g, conditions);
    if (encoder) {
      if (!part.open_conditions.empty() || output)
        throw CompileError("--encoder: the decoder step has a run-time If over branches of different shapes");
      const detail::Hoisted h = detail::hoist_context(*part.encoder, g);
      part.notes.push_back(fmt::format("--encoder: the decoder step's context {}; {} node(s) it computed from them "
                                       "alone run once per input in the encoder method, which gives the step its "
                                       "{} context input(s)",
                                       h.bound, h.nodes, h.context));
    }
    part.partition = partitioner::partition_graph(g, popts, ctx.not_lowered);
    if (!part.open_conditions.empty()) return part;
    if (config.on_partition && !output && !reported) {
      config.on_partition(g, part.partition, popts.limits, part.attention);
      reported = true;
    }
    if (size_t n = part.partition.num_rejected(); n && !config.cpu_fallback)
      throw CompileError(output ? fmt::format("the If condition '{}': {} node(s) cannot run on Vulkan: {}", *output, n,
                                              rejected_list(part.partition))
                                : fmt::format("{} node(s) cannot run on Vulkan: {}", n, rejected_list(part.partition)));
    return part;
  };
  // One variant: the model compiled for `sizes`, split where run-time Ifs need it.
  auto compile_variant = [&](const detail::DimSizes& sizes, bool timed) {
    detail::Split split;
    auto root = std::make_unique<detail::Part>(compile_part({}, nullptr, timed, sizes));
    if (root->open_conditions.empty()) {
      split.leaves.push_back(root.get());
      split.parts.push_back(std::move(root));
      return split;
    }
    try {
      split = detail::split_on_conditions(*root, [&](const detail::Bindings& b, const std::string* output) {
        return compile_part(b, output, false, sizes);
      });
    } catch (const CompileError&) {
      // A split that fails still leaves its report (the unsplit graph, the If refused in it).
      if (config.on_partition && !reported)
        config.on_partition(*root->graph, root->partition, popts.limits, root->attention);
      throw;
    }
    split.parts.push_back(std::move(root));
    return split;
  };
  // --dim NAME=MIN..MAX: compiled at probe sizes, the first (every dim at its max) here.
  std::vector<detail::DimRange> ranges;
  for (const auto& [name, range] : config.dim_ranges) ranges.push_back({name, range.first, range.second});
  if (!ranges.empty()) {
    if (!config.dim_sizes.empty())
      throw CompileError("--dim with a range cannot be combined with --dim lists of sizes");
    options.require_dynamic_shapes = true;  // and every integer argument gets a value of its own
  }
  detail::Split split;
  if (!ranges.empty()) {
    split = compile_variant(detail::probe_sizes(ranges).front(), true);
  } else if (config.dim_sizes.empty()) {
    split = compile_variant({}, true);
  } else {
    if (config.max_seq_len > 0)
      throw CompileError("--dim with several sizes cannot be combined with --max-seq-len (each variant would keep "
                         "its own KV cache; a range, --dim sequence=1..S, keeps one)");
    const auto combinations = detail::size_combinations(config.dim_sizes);
    std::vector<detail::Split> variants;
    for (size_t k = 0; k < combinations.size(); ++k) {
      try {
        variants.push_back(compile_variant(combinations[k], k == 0));
      } catch (const CompileError& e) {
        throw CompileError(fmt::format("with {}: {}", detail::describe(combinations[k]), e.what()));
      }
    }
    split = detail::join_size_variants(std::move(variants), combinations);
    std::string listed;
    for (const auto& [name, values] : config.dim_sizes)
      listed += fmt::format("{}{} in {{{}}}", listed.empty() ? "" : ", ", name, fmt::join(values, ", "));
    stats.notes.push_back(fmt::format("compiled for {}: the program holds {} variants and picks one by the inputs' "
                                      "shapes as it runs",
                                      listed, combinations.size()));
  }
  if (!split.conditions.empty())
    stats.notes.push_back(fmt::format(
        "If condition{} {} {} decided at run time over branches of different shapes: the program holds {} "
        "compiled variants and picks one as it runs",
        split.conditions.size() > 1 ? "s" : "", fmt::join(split.conditions, ", "),
        split.conditions.size() > 1 ? "are" : "is", split.leaves.size()));
  end_phase();
  const detail::Part& first = *split.leaves.front();
  for (const detail::Part* p : split.leaves)
    for (const std::string& note : p->notes)
      if (std::find(stats.notes.begin(), stats.notes.end(), note) == stats.notes.end()) stats.notes.push_back(note);
  std::shared_ptr<ir::Graph> g = first.graph;
  stats.partition = first.partition;

  const std::string out_name = out.bytes ? std::string("<pte bytes>") : out.file.string();
  try {
    begin_phase();
    serializer::ShaderEmbedding embedding;
    if (config.embed_shaders) {
      embedding.library = &builtin_shader_library();
      embedding.allow_coopmat_nv = config.device && config.device->cooperative_matrix == partitioner::CoopMat::Nv;
      embedding.allow_coopmat_khr = config.device && config.device->cooperative_matrix == partitioner::CoopMat::Khr;
    }
    serializer::ShaderEmbedding* shaders = config.embed_shaders ? &embedding : nullptr;
    serializer::Program program;
    if (split.tree) {
      if (!ranges.empty())
        throw CompileError("--dim with a range: the model has a run-time If over branches of different shapes, "
                           "which one program that resizes cannot hold (compile for a list of sizes instead)");
      program = serializer::build_branching_program(*split.tree, options, config.cpu_fallback, shaders);
    } else if (ranges.empty()) {
      // One graph: its large constants are hashed as they are written (read once), unless another
      // program's constants are merged with its by key (the encoder method's).
      program = serializer::build_program(*g, stats.partition, options, config.cpu_fallback, shaders,
                                          config.encoder.empty() ? kDeferKeysFrom : 0);
    }
    // --encoder with a range: each probe's encoder (its graph after the step's context moved in),
    // merged like the step's programs below.
    std::map<detail::DimSizes, std::pair<std::shared_ptr<ir::Graph>, std::map<std::string, std::string>>> probe_encoders;
    if (!split.tree && !ranges.empty()) {
      bool first_probe = true;
      program = detail::merge_probes(
          [&](const detail::DimSizes& sizes) {
            if (first_probe) {
              first_probe = false;
              return serializer::build_program(*g, stats.partition, options, config.cpu_fallback, shaders);
            }
            detail::Split probe;
            try {
              probe = compile_variant(sizes, false);
            } catch (const CompileError& e) {
              throw CompileError(fmt::format("--dim range: at {}: {}", detail::describe(sizes), e.what()));
            }
            if (probe.tree)
              throw CompileError(fmt::format("--dim range: at {} the model has a run-time If over branches of "
                                             "different shapes (compile for a list of sizes instead)",
                                             detail::describe(sizes)));
            const detail::Part& part = *probe.leaves.front();
            if (part.encoder) probe_encoders[sizes] = {part.encoder, part.encoder_not_lowered};
            return serializer::build_program(*part.graph, part.partition, options, config.cpu_fallback, shaders);
          },
          ranges, stats.notes);
    }
    if (first.encoder) {
      const auto encoder_program = [&](ir::Graph& encoder, const std::map<std::string, std::string>& not_lowered,
                                       bool count) {
        const partitioner::Partition ep = partitioner::partition_graph(encoder, popts, not_lowered);
        if (size_t n = ep.num_rejected(); n && !config.cpu_fallback)
          throw CompileError(fmt::format("--encoder: {} node(s) cannot run on Vulkan: {}", n, rejected_list(ep)));
        if (count) {
          for (const auto& d : ep.delegates) stats.runtime_nodes += d.nodes.size();
          stats.delegates += ep.delegates.size();
        }
        return serializer::build_program(encoder, ep, options, config.cpu_fallback, shaders);
      };
      serializer::Program encoder;
      if (ranges.empty()) {
        encoder = encoder_program(*first.encoder, first.encoder_not_lowered, true);
      } else {
        std::vector<std::string> encoder_notes;
        bool first_probe = true;
        encoder = detail::merge_probes(
            [&](const detail::DimSizes& sizes) {
              if (first_probe) {
                first_probe = false;
                return encoder_program(*first.encoder, first.encoder_not_lowered, true);
              }
              const auto it = probe_encoders.find(sizes);
              if (it == probe_encoders.end())
                throw CompileError(fmt::format("--encoder: no encoder was compiled at {}", detail::describe(sizes)));
              return encoder_program(*it->second.first, it->second.second, false);
            },
            ranges, encoder_notes);
      }
      serializer::add_method(program, std::move(encoder), serializer::kEncoderMethod);
    }
    if (config.max_seq_len > 0) add_llm_metadata(program, model, config, stats.notes);
    stats.embedded_shaders = embedding.embedded.size();
    stats.operators_without_shaders.assign(embedding.missing.begin(), embedding.missing.end());
    stats.named_data = static_cast<size_t>(std::count_if(program.named_data.begin(), program.named_data.end(), [](const auto& nd) {
      return !serializer::is_io_names_key(nd.key);  // constants only
    }));
    end_phase();
    begin_phase();
    if (out.ptd_bytes || !out.ptd_file.empty()) {  // constants to ExecuTorch's external data file
      const std::vector<serializer::NamedData> external = serializer::take_external_data(program);
      serializer::ResolvedKeys resolved;
      if (out.ptd_bytes) {
        *out.ptd_bytes = serializer::serialize_ptd(external, &resolved);
        stats.external_bytes = out.ptd_bytes->size();
      } else {
        if (std::filesystem::weakly_canonical(out.ptd_file) == std::filesystem::weakly_canonical(out.file))
          throw CompileError(fmt::format("--external-weights '{}' is the program's own path", out.ptd_file.string()));
        resolved = serializer::write_ptd(external, out.ptd_file);
        stats.external_bytes = std::filesystem::file_size(out.ptd_file);
      }
      serializer::resolve_deferred_keys(program, resolved);
    }
    try {
      if (out.bytes) {
        *out.bytes = serializer::serialize_pte(program);
        stats.output_bytes = out.bytes->size();
      } else {
        serializer::write_pte(program, out.file);
        stats.output_bytes = std::filesystem::file_size(out.file);
      }
    } catch (...) {
      if (!out.ptd_file.empty()) std::filesystem::remove(out.ptd_file);  // no half of a pair left behind
      throw;
    }
    end_phase();
  } catch (const serializer::SerializeError& e) {
    throw CompileError(fmt::format("{}: {}", out_name, e.what()));
  }
  for (const auto* parts : {&split.leaves, &split.condition_parts})  // every program the chain runs
    for (const detail::Part* part : *parts) {
      stats.delegates += part->partition.delegates.size();
      for (const auto& d : part->partition.delegates) stats.runtime_nodes += d.nodes.size();
    }
  stats.graph = std::move(g);
  return stats;
}

CompileStats compile_file(const std::filesystem::path& model, const std::filesystem::path& out,
                          const CompileConfig& config, const std::filesystem::path& external_weights) {
  ModelSource source;
  source.file = model;
  PteSink sink;
  sink.file = out;
  sink.ptd_file = external_weights;
  return compile(source, sink, config);
}

}  // namespace vkc::compiler
