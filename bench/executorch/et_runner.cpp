// et_runner: a small runner over the ExecuTorch runtime and its Vulkan backend (built by
// bench/executorch/build.sh from public sources). It loads a .pte, fills the inputs from files,
// runs N times and prints outputs and times; with --generate it runs a KV-cache decoder
// (inputs: tokens int64 [1,S], input_pos int64 [1]) greedily, and an encoder-decoder program's
// encoder method first, on the --input files (its outputs are forward's inputs after those two).
// bench/executorch/compare.sh runs it beside `vkc run` on the same programs.
//
//   et_runner FILE.pte [--input F.pb|F.bin ...] [--expect OUT.pb ...] [--repeat N]
//             [--generate N --prompt-ids 1,2,3] [--dump-output0 FILE] [--data FILE.ptd]
//
// Output lines: "LOAD: ok (X ms) ...", "output I: ...", "expect I: max_abs_err=...",
// "time: first X ms, mean Y ms/run, min Z ms over N runs", or for --generate "tokens: ..." and
// "steps: ...". Exit status 0 ran, 1 failed, 2 usage.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>
#if defined(ET_RUNNER_PROFILE)
#include <map>

#include <executorch/runtime/core/event_tracer.h>
#endif

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::extension::FileDataLoader;
using executorch::extension::FlatTensorDataMap;
using executorch::extension::MallocMemoryAllocator;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;

static const char* dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float: return "float32";
    case ScalarType::Half: return "float16";
    case ScalarType::Double: return "float64";
    case ScalarType::Long: return "int64";
    case ScalarType::Int: return "int32";
    case ScalarType::Short: return "int16";
    case ScalarType::Char: return "int8";
    case ScalarType::Byte: return "uint8";
    case ScalarType::Bool: return "bool";
    case ScalarType::BFloat16: return "bfloat16";
    default: return "other";
  }
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp((float)mant, -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp((float)(mant | 0x400), (int)exp - 25);
  return sign ? -v : v;
}

static double elem_as_double(const void* data, ScalarType t, size_t i) {
  switch (t) {
    case ScalarType::Float: return ((const float*)data)[i];
    case ScalarType::Double: return ((const double*)data)[i];
    case ScalarType::Half: return half_to_float(((const uint16_t*)data)[i]);
    case ScalarType::Long: return (double)((const int64_t*)data)[i];
    case ScalarType::Int: return ((const int32_t*)data)[i];
    case ScalarType::Short: return ((const int16_t*)data)[i];
    case ScalarType::Char: return ((const int8_t*)data)[i];
    case ScalarType::Byte: return ((const uint8_t*)data)[i];
    case ScalarType::Bool: return ((const uint8_t*)data)[i] ? 1 : 0;
    default: return NAN;
  }
}

static size_t elem_size(ScalarType t) {
  switch (t) {
    case ScalarType::Float: case ScalarType::Int: return 4;
    case ScalarType::Double: case ScalarType::Long: return 8;
    case ScalarType::Half: case ScalarType::Short: case ScalarType::BFloat16: return 2;
    default: return 1;
  }
}

static bool read_file(const std::string& p, std::string& out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

// ---- minimal ONNX TensorProto parser ----
struct PbTensor {
  std::vector<int64_t> dims;
  int data_type = 0;
  std::string raw;
  std::vector<float> f;
  std::vector<double> d;
  std::vector<int64_t> i64;  // int32_data / int64_data / uint64
};

static bool pb_varint(const uint8_t*& p, const uint8_t* e, uint64_t& v) {
  v = 0;
  int s = 0;
  while (p < e) {
    uint8_t b = *p++;
    v |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) return true;
    s += 7;
  }
  return false;
}

static bool parse_tensor_proto(const std::string& buf, PbTensor& t) {
  const uint8_t* p = (const uint8_t*)buf.data();
  const uint8_t* e = p + buf.size();
  while (p < e) {
    uint64_t key;
    if (!pb_varint(p, e, key)) return false;
    int field = (int)(key >> 3), wt = (int)(key & 7);
    if (wt == 0) {
      uint64_t v;
      if (!pb_varint(p, e, v)) return false;
      if (field == 1) t.dims.push_back((int64_t)v);
      else if (field == 2) t.data_type = (int)v;
      else if (field == 5 || field == 7 || field == 11) t.i64.push_back((int64_t)v);
    } else if (wt == 2) {
      uint64_t len;
      if (!pb_varint(p, e, len) || p + len > e) return false;
      const uint8_t* q = p;
      const uint8_t* qe = p + len;
      if (field == 9) t.raw.assign((const char*)p, len);
      else if (field == 1 || field == 5 || field == 7 || field == 11) {
        while (q < qe) {
          uint64_t v;
          if (!pb_varint(q, qe, v)) return false;
          if (field == 1) t.dims.push_back((int64_t)v);
          else t.i64.push_back((int64_t)v);
        }
      } else if (field == 4) {
        for (; q + 4 <= qe; q += 4) { float x; memcpy(&x, q, 4); t.f.push_back(x); }
      } else if (field == 10) {
        for (; q + 8 <= qe; q += 8) { double x; memcpy(&x, q, 8); t.d.push_back(x); }
      }
      p += len;
    } else if (wt == 5) {
      if (field == 4) { float x; memcpy(&x, p, 4); t.f.push_back(x); }
      p += 4;
    } else if (wt == 1) {
      if (field == 10) { double x; memcpy(&x, p, 8); t.d.push_back(x); }
      p += 8;
    } else {
      return false;
    }
  }
  return true;
}

// ONNX dtype -> values as double (for conversion)
static bool pb_values(const PbTensor& t, std::vector<double>& vals) {
  size_t n = 1;
  for (auto d : t.dims) n *= (size_t)d;
  vals.clear();
  if (!t.raw.empty()) {
    const char* r = t.raw.data();
    for (size_t i = 0; i < n; i++) {
      switch (t.data_type) {
        case 1: { float x; memcpy(&x, r + 4 * i, 4); vals.push_back(x); break; }
        case 11: { double x; memcpy(&x, r + 8 * i, 8); vals.push_back(x); break; }
        case 7: { int64_t x; memcpy(&x, r + 8 * i, 8); vals.push_back((double)x); break; }
        case 6: { int32_t x; memcpy(&x, r + 4 * i, 4); vals.push_back(x); break; }
        case 10: { uint16_t x; memcpy(&x, r + 2 * i, 2); vals.push_back(half_to_float(x)); break; }
        case 9: case 2: vals.push_back((uint8_t)r[i]); break;
        case 3: vals.push_back((int8_t)r[i]); break;
        default: return false;
      }
    }
    return true;
  }
  if (!t.f.empty()) for (float x : t.f) vals.push_back(x);
  else if (!t.d.empty()) for (double x : t.d) vals.push_back(x);
  else if (!t.i64.empty()) {
    for (int64_t x : t.i64) {
      if (t.data_type == 10) vals.push_back(half_to_float((uint16_t)x));
      else vals.push_back((double)x);
    }
  }
  return vals.size() == n;
}

static void store_value(void* data, ScalarType t, size_t i, double v) {
  switch (t) {
    case ScalarType::Float: ((float*)data)[i] = (float)v; break;
    case ScalarType::Double: ((double*)data)[i] = v; break;
    case ScalarType::Long: ((int64_t*)data)[i] = (int64_t)v; break;
    case ScalarType::Int: ((int32_t*)data)[i] = (int32_t)v; break;
    case ScalarType::Short: ((int16_t*)data)[i] = (int16_t)v; break;
    case ScalarType::Char: ((int8_t*)data)[i] = (int8_t)v; break;
    case ScalarType::Byte: case ScalarType::Bool: ((uint8_t*)data)[i] = (uint8_t)v; break;
    default: break;
  }
}

// An input tensor whose storage we own.
struct OwnedTensor {
  ScalarType dtype;
  std::vector<TensorImpl::SizesType> sizes;
  std::vector<TensorImpl::DimOrderType> dim_order;
  std::vector<uint8_t> data;
  std::unique_ptr<TensorImpl> impl;
  void make() {
    impl = std::make_unique<TensorImpl>(
        dtype, (ssize_t)sizes.size(), sizes.data(), data.data(), dim_order.data());
  }
  size_t numel() const {
    size_t n = 1;
    for (auto s : sizes) n *= (size_t)s;
    return n;
  }
};

static void print_output(size_t idx, const EValue& ev) {
  if (!ev.isTensor()) {
    if (ev.isInt()) printf("output %zu: int %" PRId64 "\n", idx, ev.toInt());
    else if (ev.isDouble()) printf("output %zu: double %g\n", idx, ev.toDouble());
    else printf("output %zu: (non-tensor, tag %d)\n", idx, (int)ev.tag);
    return;
  }
  const Tensor& t = ev.toTensor();
  printf("output %zu: dtype=%s shape=[", idx, dtype_name(t.scalar_type()));
  for (ssize_t i = 0; i < t.dim(); i++) printf("%s%d", i ? "," : "", (int)t.size(i));
  size_t n = t.numel();
  double mn = INFINITY, mx = -INFINITY;
  size_t nan_count = 0;
  for (size_t i = 0; i < n; i++) {
    double v = elem_as_double(t.const_data_ptr(), t.scalar_type(), i);
    if (std::isnan(v)) { nan_count++; continue; }
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  printf("] min=%.6g max=%.6g%s first:", mn, mx, nan_count ? " (NaNs!)" : "");
  for (size_t i = 0; i < std::min<size_t>(n, 8); i++)
    printf(" %.6g", elem_as_double(t.const_data_ptr(), t.scalar_type(), i));
  printf("\n");
}

#if defined(ET_RUNNER_PROFILE)
// Built with -DET_RUNNER_PROFILE and a VulkanBackend.cpp compiled with ET_EVENT_TRACER_ENABLED
// (build.sh --profile): the Vulkan backend then times every shader dispatch with a query pool and
// logs it here; at exit, the mean per dispatch over the timed runs (the first run left out), in
// `vkc run`'s VKC_VULKAN_PROFILE format, on stderr.
// VulkanBackend.cpp compiled with ET_EVENT_TRACER_ENABLED calls these, which ComputeGraph.cpp defines
// only when it is compiled so too (it is not: build.sh --profile rebuilds VulkanBackend.cpp alone).
std::string& set_and_get_current_operator_json(const std::string& json) {
  static std::string current;
  if (!json.empty()) current = json;
  return current;
}
size_t get_current_operator_count(const bool increment) {
  static size_t count = 0;
  if (increment) ++count;
  return count;
}

namespace etr = executorch::runtime;
class DispatchTimes final : public etr::EventTracer {
 public:
  void create_event_block(const char*) override {}
  etr::EventTracerEntry start_profiling(const char*, etr::ChainID, etr::DebugHandle) override { return {}; }
  etr::EventTracerEntry start_profiling_delegate(const char*, etr::DelegateDebugIntId) override { return {}; }
  void end_profiling_delegate(etr::EventTracerEntry, const void*, size_t) override {}
  void log_profiling_delegate(const char* name, etr::DelegateDebugIntId, et_timestamp_t start, et_timestamp_t end,
                              const void*, size_t) override {
    if (!counting) return;
    auto& e = times[name];
    e.first += double(end - start) / 1e3;
    e.second += 1;
    if (order.size() < times.size()) order.push_back(name);
  }
  void end_profiling(etr::EventTracerEntry) override {}
  void track_allocation(etr::AllocatorID, size_t) override {}
  etr::AllocatorID track_allocator(const char*) override { return 0; }
  etr::Result<bool> log_evalue(const etr::EValue&, etr::LoggedEValueType) override { return false; }
  etr::Result<bool> log_intermediate_output_delegate(const char*, etr::DelegateDebugIntId, const Tensor&) override {
    return false;
  }
  etr::Result<bool> log_intermediate_output_delegate(const char*, etr::DelegateDebugIntId,
                                                     const etr::ArrayRef<Tensor>) override {
    return false;
  }
  etr::Result<bool> log_intermediate_output_delegate(const char*, etr::DelegateDebugIntId, const int&) override {
    return false;
  }
  etr::Result<bool> log_intermediate_output_delegate(const char*, etr::DelegateDebugIntId, const bool&) override {
    return false;
  }
  etr::Result<bool> log_intermediate_output_delegate(const char*, etr::DelegateDebugIntId, const double&) override {
    return false;
  }
  void set_delegation_intermediate_output_filter(etr::EventTracerFilterBase*) override {}

  void report(int runs) const {
    double total = 0;
    for (const auto& k : order) total += times.at(k).first;
    fprintf(stderr, "et profile: %zu dispatch(es), %.3f ms GPU time per run (mean of %d run(s))\n", order.size(),
            total / runs / 1e3, runs);
    for (const auto& k : order) {
      const auto& e = times.at(k);
      fprintf(stderr, "%11.1f us %5.1f%%  %s\n", e.first / runs, 100.0 * e.first / total, k.c_str());
    }
  }
  bool counting = false;
  std::map<std::string, std::pair<double, int>> times;  // name (with dispatch id) -> (us, count)
  std::vector<std::string> order;
};
#endif

static double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// An input tensor's values from FILE.pb (a TensorProto) or FILE.bin (raw bytes of its dtype).
static bool fill_from_file(const std::string& f, OwnedTensor& o) {
  std::string buf;
  if (!read_file(f, buf)) {
    fprintf(stderr, "cannot read %s\n", f.c_str());
    return false;
  }
  if (f.size() > 3 && f.substr(f.size() - 3) == ".pb") {
    PbTensor t;
    std::vector<double> vals;
    if (!parse_tensor_proto(buf, t) || !pb_values(t, vals)) {
      fprintf(stderr, "cannot parse TensorProto %s\n", f.c_str());
      return false;
    }
    o.sizes.assign(t.dims.begin(), t.dims.end());
    o.data.assign(vals.size() * elem_size(o.dtype), 0);
    for (size_t k = 0; k < vals.size(); k++) store_value(o.data.data(), o.dtype, k, vals[k]);
    return true;
  }
  if (buf.size() != o.data.size()) {
    fprintf(stderr, "%s: %zu bytes, expected %zu\n", f.c_str(), buf.size(), o.data.size());
    return false;
  }
  memcpy(o.data.data(), buf.data(), buf.size());
  return true;
}

// An encoder-decoder program (vkc compile --encoder): its "encoder" method runs once on the input
// files, and its outputs fill the forward method's inputs from index 2 on (after tokens and
// input_pos), in order. Returns false (after saying why) when it cannot.
static bool run_encoder(Program& program, const executorch::runtime::NamedDataMap* named,
                        const std::vector<std::string>& files, std::vector<OwnedTensor>& ins) {
  Result<MethodMeta> meta = program.method_meta("encoder");
  if (!meta.ok()) {
    fprintf(stderr, "the program takes %zu inputs and has no encoder method to compute those after the 2nd\n",
            ins.size());
    return false;
  }
  std::vector<std::vector<uint8_t>> planned;
  std::vector<Span<uint8_t>> spans;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); i++) {
    planned.emplace_back((size_t)meta->memory_planned_buffer_size(i).get());
    spans.emplace_back(planned.back().data(), planned.back().size());
  }
  HierarchicalAllocator planned_mem({spans.data(), spans.size()});
  MallocMemoryAllocator method_alloc, temp_alloc;
  MemoryManager mm(&method_alloc, &planned_mem, &temp_alloc);
  Result<Method> enc = program.load_method("encoder", &mm, nullptr, named);
  if (!enc.ok()) {
    fprintf(stderr, "load_method(encoder) failed: 0x%x\n", (unsigned)enc.error());
    return false;
  }
  if (files.size() != enc->inputs_size()) {
    fprintf(stderr, "the encoder takes %zu input(s): give them with --input\n", enc->inputs_size());
    return false;
  }
  std::vector<OwnedTensor> enc_ins(enc->inputs_size());
  for (size_t i = 0; i < enc_ins.size(); i++) {
    auto tm = meta->input_tensor_meta(i);
    OwnedTensor& o = enc_ins[i];
    o.dtype = tm->scalar_type();
    for (auto d : tm->sizes()) o.sizes.push_back(d);
    for (auto d : tm->dim_order()) o.dim_order.push_back(d);
    o.data.assign(o.numel() * elem_size(o.dtype), 0);
    if (!fill_from_file(files[i], o)) return false;
    o.make();
    if (enc->set_input(EValue(Tensor(o.impl.get())), i) != Error::Ok) return false;
  }
  double a = now_ms();
  if (Error e = enc->execute(); e != Error::Ok) {
    fprintf(stderr, "encoder execute failed: 0x%x\n", (unsigned)e);
    return false;
  }
  printf("encoder: %.1f ms\n", now_ms() - a);
  if (enc->outputs_size() + 2 != ins.size()) {
    fprintf(stderr, "the encoder gives %zu outputs; forward takes %zu after tokens and input_pos\n",
            enc->outputs_size(), ins.size() - 2);
    return false;
  }
  for (size_t i = 0; i < enc->outputs_size(); i++) {
    const Tensor& t = enc->get_output(i).toTensor();
    OwnedTensor& o = ins[i + 2];
    // A program compiled for a range of encoder lengths: the context takes the encoder output's
    // shape, within the bound forward's input gives.
    bool within = (size_t)t.dim() == o.sizes.size();
    for (size_t k = 0; within && k < o.sizes.size(); k++) within = t.size(k) <= o.sizes[k];
    if (within && (size_t)t.numel() != o.numel()) {
      for (size_t k = 0; k < o.sizes.size(); k++) o.sizes[k] = t.size(k);
      o.data.assign(o.numel() * elem_size(o.dtype), 0);
    }
    if ((size_t)t.numel() != o.numel()) {
      fprintf(stderr, "encoder output %zu has %zu elements; forward input %zu takes %zu\n", i, (size_t)t.numel(),
              i + 2, o.numel());
      return false;
    }
    for (size_t k = 0; k < o.numel(); k++)
      store_value(o.data.data(), o.dtype, k, elem_as_double(t.const_data_ptr(), t.scalar_type(), k));
  }
  return true;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: et_runner FILE.pte [--input F.pb|F.bin ...] [--repeat N] "
            "[--generate N --prompt-ids 1,2,3] [--dump-output0 FILE] [--data FILE.ptd]\n");
    return 2;
  }
  std::string pte = argv[1];
  std::vector<std::string> input_files;
  int repeat = 1, gen_n = -1;
  std::vector<int64_t> prompt;
  std::string dump0, data_file;
  std::vector<std::string> expect_files;
  for (int i = 2; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc) {
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) input_files.push_back(argv[++i]);
    } else if (a == "--repeat" && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (a == "--generate" && i + 1 < argc) gen_n = atoi(argv[++i]);
    else if (a == "--dump-output0" && i + 1 < argc) dump0 = argv[++i];
    else if (a == "--data" && i + 1 < argc) data_file = argv[++i];
    else if (a == "--expect" && i + 1 < argc) {
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) expect_files.push_back(argv[++i]);
    }
    else if (a == "--prompt-ids" && i + 1 < argc) {
      std::stringstream ss(argv[++i]);
      std::string tok;
      while (std::getline(ss, tok, ',')) prompt.push_back(atoll(tok.c_str()));
    } else {
      fprintf(stderr, "unknown arg %s\n", a.c_str());
      return 2;
    }
  }

  executorch::runtime::runtime_init();

  double t0 = now_ms();
  Result<FileDataLoader> loader = FileDataLoader::from(pte.c_str());
  if (!loader.ok()) {
    fprintf(stderr, "FileDataLoader::from failed: 0x%x\n", (unsigned)loader.error());
    return 1;
  }
  // The program's external data (.ptd, vkc compile --external-weights), as Module(pte, ptd) loads it.
  std::optional<Result<FileDataLoader>> data_loader;
  std::optional<Result<FlatTensorDataMap>> data_map;
  if (!data_file.empty()) {
    data_loader.emplace(FileDataLoader::from(data_file.c_str()));
    if (!data_loader->ok()) {
      fprintf(stderr, "FileDataLoader::from(%s) failed: 0x%x\n", data_file.c_str(), (unsigned)data_loader->error());
      return 1;
    }
    data_map.emplace(FlatTensorDataMap::load(&data_loader->get()));
    if (!data_map->ok()) {
      fprintf(stderr, "FlatTensorDataMap::load(%s) failed: 0x%x\n", data_file.c_str(), (unsigned)data_map->error());
      return 1;
    }
  }
  const executorch::runtime::NamedDataMap* named = data_map ? &data_map->get() : nullptr;
  Result<Program> program = Program::load(&loader.get());
  if (!program.ok()) {
    fprintf(stderr, "Program::load failed: 0x%x\n", (unsigned)program.error());
    return 1;
  }
  const char* method_name = "forward";
  Result<MethodMeta> meta = program->method_meta(method_name);
  if (!meta.ok()) {
    fprintf(stderr, "method_meta(forward) failed: 0x%x\n", (unsigned)meta.error());
    return 1;
  }
  std::vector<std::vector<uint8_t>> planned;
  std::vector<Span<uint8_t>> spans;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); i++) {
    size_t sz = (size_t)meta->memory_planned_buffer_size(i).get();
    planned.emplace_back(sz);
    spans.emplace_back(planned.back().data(), sz);
  }
  HierarchicalAllocator planned_mem({spans.data(), spans.size()});
  MallocMemoryAllocator method_alloc, temp_alloc;
  MemoryManager mm(&method_alloc, &planned_mem, &temp_alloc);
  std::optional<Result<Method>> method_holder;
#if defined(ET_RUNNER_PROFILE)
  DispatchTimes tracer;
#endif
  try {
#if defined(ET_RUNNER_PROFILE)
    method_holder.emplace(program->load_method(method_name, &mm, &tracer, named));
#else
    method_holder.emplace(program->load_method(method_name, &mm, nullptr, named));
#endif
  } catch (const std::exception& ex) {
    fprintf(stderr, "EXCEPTION in load_method: %s\n", ex.what());
    printf("LOAD: FAILED (C++ exception)\n");
    return 1;
  }
  double t1 = now_ms();
  Result<Method>& method = *method_holder;
  if (!method.ok()) {
    fprintf(stderr, "load_method(forward) failed: 0x%x\n", (unsigned)method.error());
    printf("LOAD: FAILED (error 0x%x)\n", (unsigned)method.error());
    return 1;
  }
  printf("LOAD: ok (%.1f ms), %zu inputs, %zu outputs\n", t1 - t0, method->inputs_size(),
         method->outputs_size());

  size_t nin = method->inputs_size();
  std::vector<OwnedTensor> ins(nin);
  for (size_t i = 0; i < nin; i++) {
    auto tm = meta->input_tensor_meta(i);
    if (!tm.ok()) {
      fprintf(stderr, "input %zu is not a tensor\n", i);
      return 1;
    }
    OwnedTensor& o = ins[i];
    o.dtype = tm->scalar_type();
    for (auto s : tm->sizes()) o.sizes.push_back(s);
    for (auto d : tm->dim_order()) o.dim_order.push_back(d);
    printf("input %zu: dtype=%s shape=[", i, dtype_name(o.dtype));
    for (size_t k = 0; k < o.sizes.size(); k++) printf("%s%d", k ? "," : "", (int)o.sizes[k]);
    printf("]\n");
    o.data.assign(o.numel() * elem_size(o.dtype), 0);
  }

  auto set_inputs = [&]() -> bool {
    for (size_t i = 0; i < nin; i++) {
      ins[i].make();
      Error e = method->set_input(EValue(Tensor(ins[i].impl.get())), i);
      if (e != Error::Ok) {
        fprintf(stderr, "set_input(%zu) failed: 0x%x\n", i, (unsigned)e);
        return false;
      }
    }
    return true;
  };

  if (gen_n >= 0) {
    if (nin < 2 || ins[0].dtype != ScalarType::Long || ins[1].dtype != ScalarType::Long ||
        ins[0].sizes.size() != 2 || ins[1].numel() != 1) {
      fprintf(stderr, "--generate needs inputs tokens int64 [1,S] and input_pos int64 [1]\n");
      return 1;
    }
    // Inputs after those: an encoder-decoder program's context, from its encoder method.
    if (nin > 2 && !run_encoder(program.get(), named, input_files, ins)) return 1;
    int S = ins[0].sizes[1];
    std::vector<int64_t> out_tokens;
    int64_t pos = 0;
    std::vector<double> step_ms;
    std::vector<float> all_logits;
    std::vector<int64_t> pending = prompt;
    size_t pi = 0;
    int steps = 0;
    double prefill_ms = 0, decode_ms = 0;
    while ((int)out_tokens.size() < gen_n) {
      std::vector<int64_t> chunk;
      const bool prefill = pi < pending.size();
      if (prefill) {
        for (int k = 0; k < S && pi < pending.size(); k++) chunk.push_back(pending[pi++]);
      } else {
        chunk.push_back(out_tokens.back());
      }
      ins[0].sizes = {1, (int)chunk.size()};
      ins[0].data.assign(chunk.size() * 8, 0);
      memcpy(ins[0].data.data(), chunk.data(), chunk.size() * 8);
      memcpy(ins[1].data.data(), &pos, 8);
      if (!set_inputs()) return 1;
      double a = now_ms();
      Error e = Error::Internal;
      try {
        e = method->execute();
      } catch (const std::exception& ex) {
        fprintf(stderr, "EXCEPTION in execute (step %d): %s\n", steps, ex.what());
      }
      double b = now_ms();
      if (e != Error::Ok) {
        fprintf(stderr, "execute failed at step %d (pos %" PRId64 "): 0x%x\n", steps, pos,
                (unsigned)e);
        printf("RUN: FAILED (error 0x%x)\n", (unsigned)e);
        return 1;
      }
      step_ms.push_back(b - a);
      (prefill ? prefill_ms : decode_ms) += b - a;
      steps++;
      if (!dump0.empty()) {
        const Tensor& lg = method->get_output(0).toTensor();
        for (size_t k = 0; k < (size_t)lg.numel(); k++)
          all_logits.push_back((float)elem_as_double(lg.const_data_ptr(), lg.scalar_type(), k));
      }
      pos += (int64_t)chunk.size();
      if (pi >= pending.size()) {
        const Tensor& lg = method->get_output(0).toTensor();
        int V = lg.size(lg.dim() - 1);
        size_t rows = lg.numel() / V;
        size_t base = (rows - 1) * V;
        int best = 0;
        double bv = -INFINITY;
        for (int v = 0; v < V; v++) {
          double x = elem_as_double(lg.const_data_ptr(), lg.scalar_type(), base + v);
          if (x > bv) { bv = x; best = v; }
        }
        out_tokens.push_back(best);
      }
    }
    if (!dump0.empty()) {
      FILE* fp = fopen(dump0.c_str(), "wb");
      fwrite(all_logits.data(), 4, all_logits.size(), fp);
      fclose(fp);
    }
    printf("tokens:");
    for (auto t : out_tokens) printf(" %" PRId64, t);
    printf("\n");
    double tot = 0, mn = INFINITY;
    for (double s : step_ms) { tot += s; mn = std::min(mn, s); }
    double tail = 0;
    size_t nt = 0;
    for (size_t i = 1; i < step_ms.size(); i++) { tail += step_ms[i]; nt++; }
    printf("steps: %d, first step %.2f ms, mean %.2f ms/step (excl. first %.2f), min %.2f\n",
           steps, step_ms[0], tot / steps, nt ? tail / nt : 0.0, mn);
    // As vkc run --generate counts them: the prompt's calls, then the calls after the first token.
    const size_t decoded = out_tokens.size() > 1 ? out_tokens.size() - 1 : 0;
    printf("prefill: %zu tokens in %.3f ms (%.1f tokens/s); decode: %zu tokens in %.3f ms (%.1f tokens/s)\n",
           prompt.size(), prefill_ms, prefill_ms > 0 ? 1000.0 * prompt.size() / prefill_ms : 0.0, decoded, decode_ms,
           decode_ms > 0 ? 1000.0 * decoded / decode_ms : 0.0);
    return 0;
  }

  // Fill inputs from files (or leave zero).
  for (size_t i = 0; i < nin && i < input_files.size(); i++)
    if (!fill_from_file(input_files[i], ins[i])) return 1;
  if (!set_inputs()) return 1;
  std::vector<double> ms;
  for (int r = 0; r < repeat; r++) {
#if defined(ET_RUNNER_PROFILE)
    tracer.counting = r > 0 || repeat == 1;
#endif
    double a = now_ms();
    Error e = Error::Internal;
    try {
      e = method->execute();
    } catch (const std::exception& ex) {
      fprintf(stderr, "EXCEPTION in execute: %s\n", ex.what());
    }
    double b = now_ms();
    if (e != Error::Ok) {
      fprintf(stderr, "execute failed (run %d): 0x%x\n", r, (unsigned)e);
      printf("RUN: FAILED (error 0x%x)\n", (unsigned)e);
      return 1;
    }
    ms.push_back(b - a);
    if (r + 1 < repeat && !set_inputs()) return 1;
  }
#if defined(ET_RUNNER_PROFILE)
  tracer.report(repeat > 1 ? repeat - 1 : 1);
#endif
  for (size_t i = 0; i < method->outputs_size(); i++) print_output(i, method->get_output(i));
  if (!dump0.empty() && method->get_output(0).isTensor()) {
    const Tensor& t = method->get_output(0).toTensor();
    FILE* fp = fopen(dump0.c_str(), "wb");
    fwrite(t.const_data_ptr(), 1, t.nbytes(), fp);
    fclose(fp);
  }
  for (size_t i = 0; i < expect_files.size() && i < method->outputs_size(); i++) {
    std::string buf;
    PbTensor pt;
    std::vector<double> ref;
    if (!read_file(expect_files[i], buf) || !parse_tensor_proto(buf, pt) || !pb_values(pt, ref)) {
      fprintf(stderr, "cannot read expected %s\n", expect_files[i].c_str());
      return 1;
    }
    const Tensor& t = method->get_output(i).toTensor();
    if ((size_t)t.numel() != ref.size()) {
      printf("expect %zu: numel mismatch %zu vs %zu\n", i, (size_t)t.numel(), ref.size());
      continue;
    }
    double maxerr = 0, refmax = 0, sumerr = 0;
    for (size_t k = 0; k < ref.size(); k++) {
      double g = elem_as_double(t.const_data_ptr(), t.scalar_type(), k);
      double d = std::fabs(g - ref[k]);
      if (!(d <= maxerr)) maxerr = d;  // catches NaN
      sumerr += d;
      refmax = std::max(refmax, std::fabs(ref[k]));
    }
    size_t V = t.dim() > 0 ? std::max<size_t>(1, t.size(t.dim() - 1)) : 1, rows = ref.size() / V, same = 0;  // 0-d: one row
    for (size_t r = 0; r < rows; r++) {
      size_t ag = 0, ar = 0;
      for (size_t v = 1; v < V; v++) {
        if (elem_as_double(t.const_data_ptr(), t.scalar_type(), r * V + v) >
            elem_as_double(t.const_data_ptr(), t.scalar_type(), r * V + ag)) ag = v;
        if (ref[r * V + v] > ref[r * V + ar]) ar = v;
      }
      same += ag == ar;
    }
    printf("expect %zu: max_abs_err=%.3g mean_abs_err=%.3g ref_absmax=%.3g argmax_rows_equal=%zu/%zu\n",
           i, maxerr, sumerr / ref.size(), refmax, same, rows);
  }
  double tot = 0, mn = INFINITY;
  for (double s : ms) { tot += s; mn = std::min(mn, s); }
  printf("time: first %.2f ms, mean %.2f ms/run, min %.2f ms over %d runs\n", ms[0],
         tot / ms.size(), mn, repeat);
  return 0;
}
