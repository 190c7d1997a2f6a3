#include "vk_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "vkc/runtime/backend.h"

namespace vkc::runtime::vk {

using serializer::VkValue;

const char* GpuTensor::layout() const {
  if (!texture) return "width_packed";
  return packed_dim == 0 ? "width_packed" : packed_dim == 1 ? "height_packed" : "channels_packed";
}

int64_t GpuTensor::items(ivec4 s) const {
  if (!texture && !int8x4) return int64_t{s[0]} * s[1] * s[2] * s[3];
  ivec4 e = s;
  e[packed_dim] = (e[packed_dim] + 3) / 4;
  return int64_t{e[0]} * e[1] * e[2] * e[3];
}

bool use_gemv(const GpuTensor& out, int64_t k, int64_t chunk, bool cpu_device) {
  static const bool off = [] {
    const char* env = std::getenv("VKC_VULKAN_GEMV");
    return env && std::string_view(env) == "0";
  }();
  if (off || cpu_device || out.dims.empty() || out.int8x4 || (out.texture && out.packed_dim != 0)) return false;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < out.dims.size(); ++d) rows *= out.dims[d];
  return out.dims.back() > 0 && k > 0 && k % chunk == 0 && rows <= 4;
}

int64_t gemv_items(const GpuTensor& out, const codegen::LibraryVariant& v) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < out.dims.size(); ++d) rows *= out.dims[d];
  const int64_t teams = gemv_teams(v);
  return rows * (((out.dims.back() + 3) / 4 + teams - 1) / teams) * v.local_size[0];
}

// 64 invocations per 4 outputs take turns over K, 32 elements of it an invocation a pass (an int4
// chunk, or 4 fp16 ones); each pass waits on memory (its weights, or its staged inputs' barrier),
// so a K of several passes (a decode step's down projection, K 5632: 3) costs several latencies.
// 256 invocations do up to 8192 in one pass, but need 4x the invocations resident at once: a
// 1.1B down projection's 512 workgroups fit a large GPU at 64 invocations and may take two waves
// at 256 (registers), so the wide copies wait for a GPU timing before they become the default.
// The _dot kernels (int4 and 8da4w) take their copies of 4 teams (`_t4`: 16 outputs a workgroup
// of 256, one staging of the row's inputs for all, one row reduction for 8da4w). H100, 1.1B decode
// step, tokens/s against the 64-invocation kernels: int4 1.08x (GPU 1.317 -> 1.223 ms), 8da4w
// 1.18x (1.552 -> 1.342 ms); 8 teams gained less (1.01x, 1.08x). VKC_VULKAN_GEMV_TEAMS=1 turns
// them off.
std::string gemv_width(Encoder& e, const GpuTensor& out, const std::string& name, int64_t k) {
  const char* env = std::getenv("VKC_VULKAN_GEMV_WIDE");  // (read at each record: the tests switch it)
  const char* teams = std::getenv("VKC_VULKAN_GEMV_TEAMS");
  if (!(teams && std::string_view(teams) == "1") && e.has_variant(out, name + "_t4")) return name + "_t4";
  const bool on = env && std::string_view(env) == "1";
  constexpr int64_t kOnePass = 64 * 32;
  const std::string wide = name + "_w256";
  return on && k > kOnePass && e.has_variant(out, wide) ? wide : name;
}

int64_t gemv_teams(const codegen::LibraryVariant& v) { return v.name.find("_t4_") != std::string::npos ? 4 : 1; }

int32_t gemv_view_split(Encoder& e, const GpuTensor& out, const serializer::VkOperatorCall& view) {
  GpuTensor& v = e.tensor_id(view.args.back());
  if (v.dtype != out.dtype || v.texture != out.texture || v.int8x4 || out.int8x4) return -1;
  const auto numel = [](const std::vector<int64_t>& d) {
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    return n;
  };
  if (numel(v.dims) != numel(out.dims)) return -1;
  if (!out.texture) return 0;
  const auto &od = out.dims, &vd = v.dims;
  if (out.packed_dim != 0 || v.packed_dim != 0 || od.size() != 3 || vd.size() != 4 || od[0] != 1 || vd[0] != 1 ||
      vd[1] != od[1] || vd[2] * vd[3] != od[2] || vd[3] % 4 != 0)
    return -1;
  return static_cast<int32_t>(vd[3]);
}

std::vector<SiblingLinear> find_sibling_linears(
    Encoder& e, const GpuTensor& out, int64_t k, const Encoder::PendingNorm* norm,
    bool (*takes)(Encoder&, const serializer::VkOperatorCall&, int32_t), size_t weight_arg) {
  std::vector<SiblingLinear> sibs;
  if (!Encoder::fusing()) return sibs;
  const auto& chain = e.graph()->chain;
  const auto& values = e.graph()->values;
  const int32_t y = e.call().args[0];
  const auto mem_of = [&](int32_t id) {
    const auto* t = std::get_if<serializer::VkTensor>(&values.at(static_cast<size_t>(id)));
    return t ? t->mem_obj_id : -1;
  };
  const int32_t src_mem = mem_of(norm ? norm->x : y);
  std::vector<int32_t> mems;
  const size_t self = static_cast<size_t>(&e.call() - chain.data());
  for (size_t at = self; at < chain.size() && sibs.size() < 3;) {
    const auto& c = chain[at];
    if (at != self && !takes(e, c, y)) break;
    const auto* w = weight_arg < c.args.size()
                        ? std::get_if<serializer::VkTensor>(&values.at(static_cast<size_t>(c.args[weight_arg])))
                        : nullptr;
    GpuTensor& o = e.tensor_id(c.args.back());
    if (!w || w->dims.size() != 2 || o.dtype != out.dtype || o.texture != out.texture ||
        o.packed_dim != out.packed_dim || o.int8x4 || o.dims.size() != out.dims.size() ||
        !std::equal(o.dims.begin(), o.dims.end() - 1, out.dims.begin()) ||
        e.vk_tensor(y).dims.back() != k)
      break;
    SiblingLinear sib{&c, &o, 0, at};
    int32_t target = c.args.back();
    size_t next = at + 1;
    if (next < chain.size() && chain[next].name == "aten.view_copy.default" &&
        chain[next].args.at(0) == c.args.back() && e.uses(c.args.back()) == 2) {
      if (const int32_t split = gemv_view_split(e, o, chain[next]); split >= 0) {
        target = chain[next].args.back();
        sib.target = &e.tensor_id(target);
        sib.split = split;
        sib.last = next++;
      }
    }
    const int32_t mem = mem_of(target);
    if (mem >= 0 && (mem == src_mem || std::find(mems.begin(), mems.end(), mem) != mems.end())) break;
    mems.push_back(mem);
    sibs.push_back(sib);
    at = next;
  }
  return sibs;
}

GatedPair find_gated_pair(Encoder& e, const GpuTensor& out, const Encoder::PendingNorm* norm,
                          bool (*takes)(Encoder&, const serializer::VkOperatorCall&, int32_t)) {
  if (!Encoder::fusing()) return {};
  const auto& chain = e.graph()->chain;
  const size_t self = static_cast<size_t>(&e.call() - chain.data());
  if (self + kGatedPairCalls >= chain.size()) return {};
  const auto &sig = chain[self + 1], &silu = chain[self + 2], &up = chain[self + 3], &mul = chain[self + 4];
  const int32_t y = e.call().args[0], g = e.call().args.back();
  if (sig.name != "aten.sigmoid.default" || silu.name != "aten.mul.Tensor" || mul.name != "aten.mul.Tensor" ||
      sig.args.size() != 2 || silu.args.size() != 3 || mul.args.size() != 3 || sig.args[0] != g || !takes(e, up, y))
    return {};
  const int32_t s = sig.args[1], m = silu.args[2], u = up.args.back(), h = mul.args[2];
  const auto pair_of = [](const serializer::VkOperatorCall& c, int32_t a, int32_t b) {
    return (c.args[0] == a && c.args[1] == b) || (c.args[0] == b && c.args[1] == a);
  };
  if (!pair_of(silu, g, s) || !pair_of(mul, m, u)) return {};
  for (const int32_t v : {g, s, m, u})
    if (e.uses(v) != (v == g ? 3 : 2) || e.is_delegate_output(v)) return {};
  GpuTensor& result = e.tensor_id(h);
  const GpuTensor& ut = e.tensor_id(u);
  if (result.dims != out.dims || result.dtype != out.dtype || result.texture != out.texture ||
      result.packed_dim != out.packed_dim || result.int8x4 || ut.dims != out.dims)
    return {};
  const auto mem_of = [&](int32_t id) {
    const auto* t = std::get_if<serializer::VkTensor>(&e.graph()->values.at(static_cast<size_t>(id)));
    return t ? t->mem_obj_id : -1;
  };
  if (mem_of(h) >= 0 && mem_of(h) == mem_of(norm ? norm->x : y)) return {};
  return {&up, &result};
}

bool dispatch_linear_group(
    Encoder& e, const std::string& family, GpuTensor& out, GpuTensor& src, int64_t k,
    const Encoder::PendingNorm* norm, const std::vector<SiblingLinear>& linears, bool gated, int absorb,
    const std::function<std::optional<LinearBuffers>(const serializer::VkOperatorCall&, int64_t n)>& buffers,
    const std::function<void(Push&, const ivec4& strides)>& push) {
  const auto n_of = [&](const SiblingLinear& l) { return e.tensor_id(l.call->args.back()).dims.back(); };
  std::vector<LinearBuffers> bufs;
  for (const SiblingLinear& l : linears) {
    std::optional<LinearBuffers> b = buffers(*l.call, n_of(l));
    if (!b) return false;
    bufs.push_back(std::move(*b));
  }
  const auto& v = e.variant(out, {}, gemv_width(e, out, family + (gated ? "_dual" : "_multi") + (norm ? "_norm" : ""), k));
  ivec4 ns{0, 0, 0, 0}, splits{0, 0, 0, 0}, biases{0, 0, 0, 0}, strides{0, 0, 0, 0};
  std::vector<Resource> res;
  int64_t blocks = 0;  // the 4-output blocks the workgroups of a row take
  for (size_t i = 0; i < (gated ? 2 : 3); ++i) {
    const size_t j = std::min(i, linears.size() - 1);
    const int64_t n = n_of(linears[j]);
    if (i < linears.size()) {
      ns[i] = static_cast<int32_t>(n), splits[i] = linears[i].split, biases[i] = bufs[i].has_bias ? 1 : 0;
      strides[i] = bufs[i].scales_stride;
      if (!gated || i == 0) blocks += (n + 3) / 4;
    }
    if (!gated || i == 0) res.push_back(linears[j].target->resource());
    if (i == 0) res.push_back(src.resource());
    for (VkBuffer b : bufs[j].buffers) res.push_back({b, VK_NULL_HANDLE});
    if (i == 0) res.insert(res.end(), bufs[0].after.begin(), bufs[0].after.end());
  }
  if (norm) res.push_back({norm->gamma, VK_NULL_HANDLE});
  Push p(v);
  p.iv("out_sizes", out.sizes).i("k", static_cast<int32_t>(k)).i("has_bias", biases[0]);
  p.i("out_split", 0).i("epilogue_op", 0);
  if (norm) p.f("norm_eps", norm->eps);
  p.iv("multi_n", ns).iv("multi_split", splits).iv("multi_bias", biases);
  push(p, strides);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < out.dims.size(); ++d) rows *= out.dims[d];
  const int64_t teams = gemv_teams(v);
  e.dispatch(v, std::move(res), p, rows * ((blocks + teams - 1) / teams) * v.local_size[0]);
  e.absorb_next(absorb);
  return true;
}

int sibling_calls_after(const Encoder& e, const std::vector<SiblingLinear>& sibs) {
  return static_cast<int>(sibs.back().last - static_cast<size_t>(&e.call() - e.graph()->chain.data()));
}

GpuTensor& gemv_output(Encoder& e, GpuTensor& out, int32_t& split) {
  split = 0;
  const serializer::VkOperatorCall* c = e.sole_next("aten.view_copy.default");
  if (!c) return out;
  const int32_t s = gemv_view_split(e, out, *c);
  if (s < 0) return out;
  split = s;
  e.absorb_next();
  return e.tensor_id(c->args.back());
}

GpuTensor* gemv_epilogue(Encoder& e, const GpuTensor& out, GpuTensor& in, GpuTensor*& other, int32_t& op) {
  if (const int32_t r = e.sole_next_silu(); r >= 0) {
    const serializer::VkGraph& g = *e.graph();
    const auto* rt = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(r)));
    const auto* it = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(e.call().args.at(0))));
    GpuTensor& res = e.tensor_id(r);
    if (rt && !(it && it->mem_obj_id >= 0 && it->mem_obj_id == rt->mem_obj_id) && res.dims == out.dims &&
        res.dtype == out.dtype && res.texture == out.texture && res.packed_dim == out.packed_dim && !res.int8x4) {
      op = 3;
      other = &in;  // bound, not read
      e.absorb_next(2);
      return &res;
    }
  }
  const serializer::VkOperatorCall* c = e.sole_next("aten.add.Tensor");
  op = 1;
  if (!c) c = e.sole_next("aten.mul.Tensor"), op = 2;
  if (!c || c->args.size() < 3) return nullptr;
  const serializer::VkGraph& g = *e.graph();
  if (op == 1) {  // add(self, other, alpha, out): alpha 1
    if (c->args.size() != 4) return nullptr;
    const auto& alpha = g.values.at(static_cast<size_t>(c->args[2]));
    const double* a = std::get_if<double>(&alpha);
    const int64_t* ai = std::get_if<int64_t>(&alpha);
    if (!(a && *a == 1.0) && !(ai && *ai == 1)) return nullptr;
  }
  const int32_t mine = e.call().args.back();
  const int32_t other_id = c->args[0] == mine ? c->args[1] : c->args[0];
  const auto* ot = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(other_id)));
  const auto* rt = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(c->args.back())));
  const auto* it = std::get_if<serializer::VkTensor>(&g.values.at(static_cast<size_t>(e.call().args.at(0))));
  if (!ot || !rt || ot->constant_id >= 0 || other_id == mine) return nullptr;
  if (it && it->mem_obj_id >= 0 && it->mem_obj_id == rt->mem_obj_id) return nullptr;
  GpuTensor& o = e.tensor_id(other_id);
  GpuTensor& r = e.tensor_id(c->args.back());
  for (const GpuTensor* t : {&o, &r})
    if (t->dims != out.dims || t->dtype != out.dtype || t->texture != out.texture || t->packed_dim != out.packed_dim ||
        t->int8x4 || &o == &in)
      return nullptr;
  other = &o;
  e.absorb_next();
  return &r;
}

ivec4 whcn(const std::vector<int64_t>& dims) {
  ivec4 s{1, 1, 1, 1};
  const size_t r = dims.size();
  for (size_t d = 0; d < r && d < 4; ++d) s[d] = static_cast<int32_t>(dims[r - 1 - d]);
  return s;
}

int whcn_dim(int64_t d, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (d < 0) d += r;
  return static_cast<int>(r - 1 - d);
}

const serializer::VkTensor& Encoder::vk_tensor(int32_t v) const {
  const auto* t = v >= 0 && static_cast<size_t>(v) < graph_->values.size()
                      ? std::get_if<serializer::VkTensor>(&graph_->values[v])
                      : nullptr;
  if (!t) fail(fmt::format("value {} is not a Tensor", v));
  return *t;
}

bool Encoder::is_constant(size_t i) const {
  const auto* t = std::get_if<serializer::VkTensor>(&value(i));
  return t && t->constant_id >= 0;
}

Encoder::SymIntSource Encoder::symint_source(size_t i) const {
  if (!std::holds_alternative<serializer::VkSymInt>(value(i)))
    fail(fmt::format("argument {} is {}, expected a SymInt set at run time", i, value_kind(value(i))));
  auto it = symint_sources.find(id(i));
  if (it == symint_sources.end())
    fail(fmt::format("argument {}: SymInt value {} is not set by an earlier et_vk.select_as_symint", i, id(i)));
  return it->second;
}

void Encoder::require_rep(const GpuTensor& t, const GpuTensor& ref, const char* what, bool same_layout) const {
  if (t.texture != ref.texture || (same_layout && t.texture && t.packed_dim != ref.packed_dim))
    fail(fmt::format("{} is {} {} but the output is {} {}; no kernel mixes them", what, t.storage(), t.layout(),
                     ref.storage(), ref.layout()));
  if (t.dtype != ref.dtype)
    fail(fmt::format("{} is {} but the output is {}", what, t.dtype_name(), ref.dtype_name()));
}

void Encoder::require_unbroadcast_high_rank(const GpuTensor& out, std::initializer_list<const GpuTensor*> ins) const {
  const size_t r = out.dims.size();
  if (r <= 4) return;
  for (const GpuTensor* t : ins) {
    std::vector<int64_t> dims(r - std::min(r, t->dims.size()), 1);  // right-aligned
    dims.insert(dims.end(), t->dims.begin(), t->dims.end());
    bool same = true, ones = true;
    for (size_t d = 0; d + 3 < r; ++d) {  // the dims folded into N
      same = same && dims[d] == out.dims[d];
      ones = ones && dims[d] == 1;
    }
    if (!same && !ones)
      fail(fmt::format("broadcasting [{}] to [{}] over folded leading dims (rank above 4) is not supported",
                       fmt::join(t->dims, ","), fmt::join(out.dims, ",")));
  }
}

bool Encoder::fusing() {
  static const bool off = [] {
    const char* env = std::getenv("VKC_VULKAN_FUSE");
    return env && std::string_view(env) == "0";
  }();
  return !off;
}

int32_t Encoder::sole_next_silu() const {
  if (!fusing() || !next_call_ || !after_next_call_ || call_->args.empty()) return -1;
  const serializer::VkOperatorCall &sig = *next_call_, &mul = *after_next_call_;
  if (sig.name != "aten.sigmoid.default" || mul.name != "aten.mul.Tensor" || sig.args.size() != 2 ||
      mul.args.size() != 3)
    return -1;
  const int32_t y = call_->args.back(), s = sig.args[1];
  const auto uses = [&](int32_t v) {
    const auto it = uses_.find(v);
    return it == uses_.end() ? 0 : it->second;
  };
  // y: this call's output, the sigmoid's input and one of the mul's; s: the sigmoid's output and
  // the mul's other input.
  if (sig.args[0] != y || uses(y) != 3 || uses(s) != 2 || graph_outputs_.count(y) || graph_outputs_.count(s)) return -1;
  if (!((mul.args[0] == y && mul.args[1] == s) || (mul.args[0] == s && mul.args[1] == y))) return -1;
  return mul.args[2];
}

const serializer::VkOperatorCall* Encoder::sole_next(std::string_view op_name) const {
  if (!fusing() || !next_call_ || next_call_->name != op_name || call_->args.empty()) return nullptr;
  const int32_t v = call_->args.back();
  const auto it = uses_.find(v);
  // Named twice in the chain: as this call's output and as one argument of the next call.
  if (it == uses_.end() || it->second != 2 || graph_outputs_.count(v)) return nullptr;
  if (std::count(next_call_->args.begin(), next_call_->args.end(), v) != 1 || next_call_->args.back() == v)
    return nullptr;
  // The fused dispatch writes the next output while reading this call's inputs: an input in the
  // same memory object must be the same tensor shape and representation (each invocation reads
  // the element it then writes), as when the planner reuses a dead input's memory.
  const auto* out = std::get_if<serializer::VkTensor>(&graph_->values.at(static_cast<size_t>(next_call_->args.back())));
  if (!out) return nullptr;
  if (out->mem_obj_id >= 0)
    for (size_t i = 0; i + 1 < call_->args.size(); ++i) {
      const auto* t = std::get_if<serializer::VkTensor>(&graph_->values.at(static_cast<size_t>(call_->args[i])));
      if (t && t->mem_obj_id == out->mem_obj_id &&
          (t->dims != out->dims || t->dtype != out->dtype || t->storage != out->storage || t->layout != out->layout))
        return nullptr;
    }
  return next_call_;
}

namespace {

// The texel (x, y, z) of WHCN coordinate `w` in a texture of `sizes` packed along `packed` (as
// vkc_common.glslh's whcn_to_texel).
std::array<int64_t, 3> texel_of(const ivec4& w, const ivec4& sizes, int packed) {
  ivec4 t = w;
  t[packed] >>= 2;
  const int64_t depth = packed == 2 ? (sizes[2] + 3) / 4 : sizes[2];
  return {t[0], t[1], int64_t{t[3]} * depth + t[2]};
}

// Invocations of copy.glsl: a texture output's region box (its texels from out_offset's to the
// region's last element's); an identity copy from a texture to a buffer, one per input texel; else
// one per output element.
int64_t copy_items(const GpuTensor& out, const GpuTensor& in, const ivec4& region, const CopyRegion& r) {
  if (out.texture) {
    ivec4 last;
    for (int d = 0; d < 4; ++d) last[d] = std::min(r.out_offset[d] + region[d], out.sizes[d]) - 1;
    const auto lo = texel_of(r.out_offset, out.sizes, out.packed_dim), hi = texel_of(last, out.sizes, out.packed_dim);
    int64_t n = 1;
    for (int d = 0; d < 3; ++d) n *= std::max<int64_t>(0, hi[d] - lo[d] + 1);
    return n;
  }
  const bool identity = r.out_offset == ivec4{0, 0, 0, 0} && r.in_offset == ivec4{0, 0, 0, 0} &&
                        r.in_step == ivec4{1, 1, 1, 1} && r.perm == ivec4{0, 1, 2, 3} && region == out.sizes &&
                        in.sizes == out.sizes;
  return in.texture && identity ? in.items() : out.items();
}

void dispatch_copy(Encoder& e, const codegen::LibraryVariant& v, GpuTensor& out, GpuTensor& in, const CopyRegion& r) {
  Push p(v);
  const bool whole = r.region == ivec4{0, 0, 0, 0};
  const ivec4 region = whole ? out.sizes : r.region;
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("region", region);
  p.iv("out_offset", r.out_offset).iv("in_offset", r.in_offset).iv("in_step", r.in_step).iv("perm", r.perm);
  p.iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0}).f("fill", r.fill);
  e.dispatch(v, {out.resource(), in.resource()}, p, copy_items(out, in, region, r));
}

}  // namespace

void encode_copy(Encoder& e, GpuTensor& out, GpuTensor& in, const CopyRegion& r) {
  if (in.dtype != out.dtype) e.fail(fmt::format("copy from {} to {} is not supported", in.dtype_name(), out.dtype_name()));
  dispatch_copy(e, e.variant(out, in.storage(), "copy", "aten.clone.default"), out, in, r);
}

void encode_staging_copy(Encoder& e, GpuTensor& out, GpuTensor& in) {
  const bool to_tensor = in.dtype == ir::DType::Float32 && out.dtype == ir::DType::Float16 && !in.texture;
  const bool from_tensor = in.dtype == ir::DType::Float16 && out.dtype == ir::DType::Float32 && !out.texture;
  if (!to_tensor && !from_tensor) return encode_copy(e, out, in, {});
  GpuTensor query;  // the variants are named by the f16 side and the output's storage
  query.dtype = ir::DType::Float16;
  query.texture = out.texture;
  query.packed_dim = out.packed_dim;
  const auto& v = e.variant(query, in.storage(), to_tensor ? "stage_in_f32" : "stage_out_f32", "aten.clone.default");
  dispatch_copy(e, v, out, in, {});
}

}  // namespace vkc::runtime::vk
