#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <numeric>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "vkc/ir/half.h"
#include "vkc/ir/op_registry.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/byte_progress.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/sha256.h"

namespace vkc::serializer {
namespace {

static_assert(static_cast<int>(ir::Storage::Buffer) == static_cast<int>(StorageType::Buffer));
static_assert(static_cast<int>(ir::Storage::Texture3D) == static_cast<int>(StorageType::Texture3D));
static_assert(static_cast<int>(ir::Storage::Texture2D) == static_cast<int>(StorageType::Texture2D));
static_assert(static_cast<int>(ir::Layout::WidthPacked) == static_cast<int>(MemoryLayout::WidthPacked));
static_assert(static_cast<int>(ir::Layout::HeightPacked) == static_cast<int>(MemoryLayout::HeightPacked));
static_assert(static_cast<int>(ir::Layout::ChannelsPacked) == static_cast<int>(MemoryLayout::ChannelsPacked));
// ir::Layout is the IR's tag and MemoryLayout the file's enum (with Default): the same values.
static_assert(static_cast<int>(ir::Layout::PackedInt8_4W4C) == static_cast<int>(MemoryLayout::PackedInt8_4W4C));
static_assert(static_cast<int>(ir::Layout::PackedInt8_4H4W) == static_cast<int>(MemoryLayout::PackedInt8_4H4W));
static_assert(static_cast<int>(ir::Layout::PackedInt8_4W) == static_cast<int>(MemoryLayout::PackedInt8_4W));
static_assert(static_cast<int>(ir::Layout::PackedInt8_4C) == static_cast<int>(MemoryLayout::PackedInt8_4C));
static_assert(static_cast<int>(ir::Layout::PackedInt8_4C1W) == static_cast<int>(MemoryLayout::PackedInt8_4C1W));
static_assert(static_cast<int>(ir::Layout::PackedInt8_Conv2d) == static_cast<int>(MemoryLayout::PackedInt8_Conv2d));

VkDataType gpu_dtype(ir::DType t, const DtypeRules& r) {
  switch (t) {
    case ir::DType::Bool: return VkDataType::Bool;
    case ir::DType::UInt8: return VkDataType::UInt8;
    case ir::DType::Int8: return VkDataType::Int8;
    case ir::DType::Int32: return VkDataType::Int32;
    case ir::DType::Int64: return r.downcast_64_bit ? VkDataType::Int32 : VkDataType::Int64;
    case ir::DType::Float16: return VkDataType::Float16;
    case ir::DType::Float32: return r.force_fp16 ? VkDataType::Float16 : VkDataType::Float32;
    case ir::DType::Float64:
      if (r.force_fp16) return VkDataType::Float16;
      return r.downcast_64_bit ? VkDataType::Float32 : VkDataType::Float64;
    default: throw SerializeError(fmt::format("dtype {} has no Vulkan equivalent", ir::dtype_name(t)));
  }
}

// `src` (n elements of `in` bytes) converted to `out`-byte elements by convert(in, out, count), as
// derived data: computed when hashed and when written, never held.
template <typename Convert>
ir::TensorData converted(const ir::TensorData& src, size_t n, size_t in, size_t out, Convert convert) {
  return ir::TensorData::derived(n * out, out, [=](uint64_t first, uint64_t bytes, uint8_t* dst) {
    const uint64_t e0 = first / out, count = bytes / out;
    if (src.is_derived()) {
      thread_local std::vector<uint8_t> staged;
      staged.resize(std::max<size_t>(staged.size(), count * in));
      src.read(e0 * in, {staged.data(), count * in});
      convert(staged.data(), dst, count);
    } else {
      convert(src.data() + e0 * in, dst, count);
      src.release(e0 * in, count * in);
    }
  });
}

// Element by element through f(in_ptr, out_ptr).
template <size_t In, size_t Out, typename F>
auto each(F f) {
  return [f](const uint8_t* p, uint8_t* q, size_t count) {
    for (size_t i = 0; i < count; ++i) f(p + i * In, q + i * Out);
  };
}

template <typename T>
T load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// Constant bytes converted to the GPU dtype.
ir::TensorData gpu_bytes(const ir::Value* v, VkDataType to) {
  const ir::TensorData& src = v->data();
  const size_t n = v->type().shape.numel();
  const ir::DType from = v->dtype();
  if (from == ir::DType::Int64 && to == VkDataType::Int32)
    return converted(src, n, 8, 4, each<8, 4>([](const uint8_t* p, uint8_t* q) {
                       const int32_t y = static_cast<int32_t>(std::clamp<int64_t>(load<int64_t>(p), INT32_MIN, INT32_MAX));
                       std::memcpy(q, &y, 4);
                     }));
  if (from == ir::DType::Float32 && to == VkDataType::Float16)
    return converted(src, n, 4, 2, [](const uint8_t* p, uint8_t* q, size_t count) {
      if (reinterpret_cast<uintptr_t>(p) % alignof(float) == 0 && reinterpret_cast<uintptr_t>(q) % alignof(uint16_t) == 0) {
        ir::floats_to_halves_saturated(reinterpret_cast<const float*>(p), reinterpret_cast<uint16_t*>(q), count);
        return;
      }
      std::vector<float> x(count);
      std::vector<uint16_t> h(count);
      std::memcpy(x.data(), p, count * 4);
      ir::floats_to_halves_saturated(x.data(), h.data(), count);
      std::memcpy(q, h.data(), count * 2);
    });
  if (from == ir::DType::Float64 && to == VkDataType::Float16)
    return converted(src, n, 8, 2, each<8, 2>([](const uint8_t* p, uint8_t* q) {
                       const uint16_t h = ir::float_to_half(static_cast<float>(std::clamp(load<double>(p), -65504.0, 65504.0)));
                       std::memcpy(q, &h, 2);
                     }));
  if (from == ir::DType::Float64 && to == VkDataType::Float32)
    return converted(src, n, 8, 4, each<8, 4>([](const uint8_t* p, uint8_t* q) {
                       const float y = static_cast<float>(load<double>(p));
                       std::memcpy(q, &y, 4);
                     }));
  return src;
}

class VkGraphBuilder {
 public:
  VkGraphBuilder(const partitioner::Delegate& d, const DtypeRules& rules, std::vector<NamedData>& named,
                 uint64_t defer_keys_from)
      : d_(d), rules_(rules), named_(named), defer_from_(defer_keys_from) {
    for (const NamedData& nd : named_) known_keys_.insert(nd.key);
  }

  VkGraph build() {
    for (const ir::Value* v : d_.inputs) g_.input_ids.push_back(static_cast<uint32_t>(tensor(v)));
    for (size_t i = 0; i < d_.nodes.size(); ++i) add_call(static_cast<uint32_t>(i), *d_.nodes[i]);
    for (const ir::Value* v : d_.outputs) g_.output_ids.push_back(static_cast<uint32_t>(tensor(v)));
    name_constants();
    return std::move(g_);
  }

 private:
  int32_t push(VkValue v) {
    g_.values.push_back(std::move(v));
    return static_cast<int32_t>(g_.values.size() - 1);
  }

  int32_t tensor(const ir::Value* v) {
    if (auto it = tensor_ids_.find(v); it != tensor_ids_.end()) return it->second;
    if (!v->shape().is_static()) throw SerializeError(fmt::format("tensor '{}' has no static shape", v->name()));
    VkTensor t;
    t.dtype = gpu_dtype(v->dtype(), rules_);
    for (int64_t s : v->shape().sizes()) t.dims.push_back(static_cast<uint32_t>(s));
    // ET-VK's broadcasting reads a dim of each operand and fails on 0-d tensors; inside the
    // delegate a 0-d tensor is the same one element as [1] (its boundary keeps ExecuTorch's rank).
    if (t.dims.empty() && !is_boundary(v)) t.dims.push_back(1);
    if (v->is_constant()) {
      t.constant_id = constant(v, t.dtype);
      t.staging = t.dtype;
    } else {
      const auto& p = d_.placement.at(v);
      t.storage = static_cast<StorageType>(p.rep.storage);
      t.layout = static_cast<MemoryLayout>(p.rep.layout);
      t.mem_obj_id = p.mem_obj_id;
      // Host-side staging keeps the tensor's own dtype, less the 64-bit downcast (so f32 under force_fp16).
      t.staging = gpu_dtype(v->dtype(), DtypeRules{rules_.downcast_64_bit, false});
    }
    return tensor_ids_[v] = push(std::move(t));
  }

  bool is_boundary(const ir::Value* v) const {
    return std::find(d_.inputs.begin(), d_.inputs.end(), v) != d_.inputs.end() ||
           std::find(d_.outputs.begin(), d_.outputs.end(), v) != d_.outputs.end();
  }

  // A constant's bytes and key are made by name_constants(), once the graph is built.
  int32_t constant(const ir::Value* v, VkDataType dtype) {
    pending_.push_back({v, dtype, {}, {}});
    g_.constants.push_back({std::numeric_limits<uint64_t>::max(), 0, {}});
    return static_cast<int32_t>(g_.constants.size() - 1);
  }

  // Converts and hashes every constant, spread over the cores (hundreds of MB for an LLM), then
  // names them in graph order, so the output does not depend on the threads.
  void name_constants() {
    // Largest first, so that a big classifier does not start last on one core.
    std::vector<size_t> order(pending_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return pending_[a].value->data().size() > pending_[b].value->data().size();
    });
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> errors(pending_.size());
    uint64_t total = 0;
    for (const Pending& p : pending_) total += p.value->data().size();
    detail::ByteCounter progress(total);
    auto work = [&] {
      for (size_t k; (k = next.fetch_add(1)) < order.size();) {
        const size_t i = order[k];
        Pending& p = pending_[i];
        try {
          p.bytes = gpu_bytes(p.value, p.dtype);
          if (defer_from_ > 0 && p.bytes.size() >= defer_from_) p.key = fingerprint(p.bytes), p.deferred = true;
          else if (!p.bytes.empty()) p.key = sha256_hex_of(p.bytes);
          progress.add(p.value->data().size());
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    };
    const size_t threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, pending_.size()});
    {
      std::vector<std::jthread> pool;
      for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
      work();
    }
    for (size_t i = 0; i < pending_.size(); ++i)
      if (errors[i]) std::rethrow_exception(errors[i]);
    resolve_fingerprints();
    for (size_t i = 0; i < pending_.size(); ++i) {
      Pending& p = pending_[i];
      if (p.bytes.empty()) throw SerializeError(fmt::format("constant '{}' is empty", p.value->name()));
      if (known_keys_.insert(p.key).second) named_.push_back({p.key, p.bytes, p.deferred});
      g_.constants[i] = {std::numeric_limits<uint64_t>::max(), p.bytes.size(), std::move(p.key)};
    }
    pending_.clear();
  }

  // A deferred constant's stand-in for its key: a SHA-256 of its size and 16 samples of 4 KiB
  // spread over it (read in place; a derived constant computes just those), which equal
  // constants share and different ones rarely do.
  // Sampled from the constant's own bytes, so equal constants have equal fingerprints. (Digests
  // that still turn out equal are caught by the writers, which then hash every deferred constant
  // first.)
  static void fingerprint_into(Sha256Stream& h, const ir::TensorData& t) {
    const uint64_t size = t.size(), sample = std::min<uint64_t>(4096, size);
    h.update({reinterpret_cast<const uint8_t*>(&size), sizeof size});
    const uint64_t samples = 16;
    std::vector<uint8_t> buf(sample);
    for (uint64_t k = 0; k < samples; ++k) {
      const uint64_t at = size > sample ? (size - sample) * k / (samples - 1) : 0;
      t.read(at, buf);
      h.update(buf);
    }
  }
  static std::string fingerprint(const ir::TensorData& t) {
    Sha256Stream h;
    fingerprint_into(h, t);
    return h.hex();
  }

  // Deferred constants with one fingerprint are hashed now (equal ones then share their key, as
  // without deferral); a fingerprint of one becomes the placeholder the writers replace by the
  // SHA-256 of the bytes they write (kDeferredKeyPrefix + as much of the fingerprint as fits).
  void resolve_fingerprints() {
    std::unordered_map<std::string, std::vector<size_t>> by_print;
    for (size_t i = 0; i < pending_.size(); ++i)
      if (pending_[i].deferred) by_print[pending_[i].key].push_back(i);
    for (auto& [print, members] : by_print) {
      for (size_t i : members) {
        Pending& p = pending_[i];
        if (members.size() > 1 || known_keys_.count(std::string(kDeferredKeyPrefix) + print.substr(kDeferredKeyPrefix.size()))) {
          p.key = sha256_hex_of(p.bytes), p.deferred = false;
          continue;
        }
        p.key = std::string(kDeferredKeyPrefix) + print.substr(kDeferredKeyPrefix.size());
      }
    }
  }

  // Scalars are shared: one value per distinct (kind, value).
  int32_t scalar(const ir::Attribute& a, ir::ArgKind kind) {
    std::string key = fmt::format("{}:{}", static_cast<int>(kind), ir::attribute_str(a));
    const bool own = rules_.own_integers && (kind == ir::ArgKind::Int || kind == ir::ArgKind::IntList ||
                                             (kind == ir::ArgKind::Scalar && std::holds_alternative<int64_t>(a)));
    if (own) key += fmt::format("#{}", g_.values.size());
    if (auto it = scalar_ids_.find(key); it != scalar_ids_.end()) return it->second;
    VkValue v = VkNull{};
    if (!std::holds_alternative<std::monostate>(a)) {
      switch (kind) {
        case ir::ArgKind::Int: v = std::get<int64_t>(a); break;
        case ir::ArgKind::Float:
          v = std::holds_alternative<double>(a) ? std::get<double>(a) : static_cast<double>(std::get<int64_t>(a));
          break;
        case ir::ArgKind::Scalar:
          if (std::holds_alternative<int64_t>(a)) v = std::get<int64_t>(a);
          else v = std::get<double>(a);
          break;
        case ir::ArgKind::Bool: v = std::get<bool>(a); break;
        case ir::ArgKind::IntList: v = VkIntList{std::get<std::vector<int64_t>>(a)}; break;
        case ir::ArgKind::FloatList: v = VkDoubleList{std::get<std::vector<double>>(a)}; break;
        case ir::ArgKind::BoolList: v = VkBoolList{std::get<ir::BoolList>(a).items}; break;
        case ir::ArgKind::String: v = std::get<std::string>(a); break;
        default: break;
      }
    }
    return scalar_ids_[key] = push(std::move(v));
  }

  // A SymInt read at run time from element 0 of `v` (an integer delegate input), as
  // et_vk.select_as_symint(v, 0, 0) placed before its first use; one per tensor.
  int32_t symint_of(uint32_t node_id, const ir::Value* v) {
    if (auto it = symint_ids_.find(v); it != symint_ids_.end()) return it->second;
    VkOperatorCall select{node_id, "et_vk.select_as_symint.default", {}};
    select.args = {tensor(v), scalar(int64_t{0}, ir::ArgKind::Int), scalar(int64_t{0}, ir::ArgKind::Int)};
    const int32_t id = push(VkSymInt{0});
    select.args.push_back(id);
    g_.chain.push_back(std::move(select));
    return symint_ids_[v] = id;
  }

  void add_call(uint32_t node_id, const ir::Node& n) {
    if (n.op_type() == "aten._to_copy.default" && n.num_inputs() == 1 && n.outputs().size() == 1) {
      // A conversion the dtype rules make an identity (i64 -> i32 once both are int32 on the
      // GPU): a clone, which ET-VK runs on buffers too (its same-dtype _to_copy is a texture blit).
      const int32_t in = tensor(n.input(0)), out = tensor(n.output(0));
      if (std::get<VkTensor>(g_.values[in]).dtype == std::get<VkTensor>(g_.values[out]).dtype) {
        g_.chain.push_back({node_id, "aten.clone.default", {in, scalar(std::monostate{}, ir::ArgKind::None), out}});
        return;
      }
    }
    if (rules_.own_integers && n.op_type() == "aten.split_with_sizes_copy.default" && n.num_inputs() == 1) {
      // A program that resizes: ET-VK's split has no resize function, its slices do. One
      // slice_copy(x, dim, start, end, 1) per part.
      const ir::Attribute* sizes = n.attr("split_sizes");
      const ir::Attribute* dim = n.attr("dim");
      if (sizes && std::holds_alternative<std::vector<int64_t>>(*sizes) &&
          std::get<std::vector<int64_t>>(*sizes).size() == n.outputs().size()) {
        const int64_t axis = dim && std::holds_alternative<int64_t>(*dim) ? std::get<int64_t>(*dim) : 0;
        int64_t start = 0;
        const int32_t in = tensor(n.input(0));
        for (size_t k = 0; k < n.outputs().size(); ++k) {
          const int64_t end = start + std::get<std::vector<int64_t>>(*sizes)[k];
          g_.chain.push_back({node_id, "aten.slice_copy.Tensor",
                              {in, scalar(axis, ir::ArgKind::Int), scalar(start, ir::ArgKind::Int),
                               scalar(end, ir::ArgKind::Int), scalar(int64_t{1}, ir::ArgKind::Int),
                               tensor(n.output(k))}});
          start = end;
        }
        return;
      }
    }
    const ir::OpSchema& s = ir::find_op(n.op_type())->schema;
    VkOperatorCall call{node_id, n.op_type(), {}};
    size_t next_input = 0;
    const size_t symint_sources = s.num_symint_inputs(n.num_inputs());  // trailing inputs feeding SymInts
    size_t next_symint = n.num_inputs() - symint_sources;
    const size_t list_len = n.num_inputs() - symint_sources - (s.num_tensor_args());
    for (const ir::ArgSpec& a : s.args) {
      if (a.kind == ir::ArgKind::Tensor) {
        const ir::Value* v = n.input(next_input++);
        call.args.push_back(v ? tensor(v) : scalar(std::monostate{}, ir::ArgKind::None));
      } else if (a.kind == ir::ArgKind::TensorList) {
        VkValueList items;
        for (size_t i = 0; i < list_len; ++i) items.items.push_back(tensor(n.input(next_input++)));
        call.args.push_back(push(std::move(items)));
      } else if (const ir::Attribute* set = n.attr(a.name)) {
        call.args.push_back(scalar(*set, a.kind));
      } else if (a.symint && next_symint < n.num_inputs()) {
        call.args.push_back(symint_of(node_id, n.input(next_symint++)));
      } else {
        call.args.push_back(scalar(a.default_value.value_or(std::monostate{}), a.kind));
      }
    }
    if (n.op_type() == "update_cache.default" && n.num_inputs() >= 2) {
      // In place: the IR's output (the updated cache) is the cache's own value from here on; the
      // call writes a dummy [1], as ET-VK's update_cache returns one.
      const int32_t cache = tensor(n.input(1));
      tensor_ids_[n.output(0)] = cache;
      VkTensor dummy = std::get<VkTensor>(g_.values[cache]);
      dummy.dims = {1};
      dummy.mem_obj_id = -1;
      call.args.push_back(push(std::move(dummy)));
    } else if (n.outputs().size() == 1 && !s.list_output) {
      call.args.push_back(tensor(n.output(0)));
    } else {
      VkValueList outs;
      for (const ir::Value* o : n.outputs()) outs.items.push_back(tensor(o));
      call.args.push_back(push(std::move(outs)));
    }
    g_.chain.push_back(std::move(call));
  }

  const partitioner::Delegate& d_;
  DtypeRules rules_;
  std::vector<NamedData>& named_;
  std::unordered_set<std::string> known_keys_;
  uint64_t defer_from_ = 0;  // constants of at least this many bytes get placeholder keys (0: none)
  struct Pending {
    const ir::Value* value;
    VkDataType dtype;
    ir::TensorData bytes;
    std::string key;
    bool deferred = false;  // key: a fingerprint, then a placeholder (resolve_fingerprints)
  };
  std::vector<Pending> pending_;  // one per g_.constants entry, in order
  VkGraph g_;
  std::unordered_map<const ir::Value*, int32_t> tensor_ids_;
  std::map<std::string, int32_t> scalar_ids_;
  std::unordered_map<const ir::Value*, int32_t> symint_ids_;
};

}  // namespace

VkGraph build_vk_graph(const partitioner::Delegate& d, const DtypeRules& rules, std::vector<NamedData>& named_data,
                       uint64_t defer_keys_from) {
  return VkGraphBuilder(d, rules, named_data, defer_keys_from).build();
}

}  // namespace vkc::serializer
