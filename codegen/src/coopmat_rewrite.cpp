// NV -> KHR cooperative matrix rewrite; see coopmat_rewrite.h for the steps.
#include "vkc/codegen/coopmat_rewrite.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace vkc::codegen {
namespace {

using namespace coopmat_op;
using Inst = std::vector<uint32_t>;  // word 0 included

constexpr uint32_t kOpTypeInt = 21, kOpTypeArray = 28, kOpTypeRuntimeArray = 29, kOpTypeStruct = 30,
                   kOpTypePointer = 32, kOpTypeFunction = 33, kOpConstantTrue = 41, kOpConstantFalse = 42,
                   kOpConstant = 43, kOpSpecConstantOp = 52, kOpFunctionParameter = 55, kOpFunctionCall = 57,
                   kOpStore = 62, kOpCompositeInsert = 82, kOpCapability = 17, kOpExtension = 10;
constexpr uint32_t kUseA = 0, kUseB = 1, kUseAcc = 2;

uint32_t opcode(const Inst& i) { return i[0] & 0xffff; }
Inst make(uint32_t op, std::vector<uint32_t> operands) {
  operands.insert(operands.begin(), (static_cast<uint32_t>(operands.size() + 1) << 16) | op);
  return operands;
}

// Opcodes with no result type, or no result at all: never treated as typed values.
bool untyped(uint32_t op) {
  if ((op >= 19 && op <= 39) || op == kTypeNV) return true;  // type declarations: result id only
  static const std::set<uint32_t> kOps = {0,   2,   3,   4,   5,   6,   7,   8,   10,  11,  14,  15,  16,
                                          17,  56,  62,  63,  71,  72,  73,  74,  75,  99,  224, 225, 228,
                                          246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 317, 330, 331,
                                          332, 5632, 5633, kStoreNV};
  return kOps.count(op) > 0;
}

std::vector<uint32_t> string_words(const std::string& s) {
  std::vector<uint32_t> w((s.size() + 4) / 4, 0);
  for (size_t i = 0; i < s.size(); ++i) w[i / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(s[i])) << (8 * (i % 4));
  return w;
}

struct UnionFind {
  std::unordered_map<uint32_t, uint32_t> parent;
  uint32_t find(uint32_t x) {
    uint32_t root = x;
    for (auto it = parent.find(root); it != parent.end() && it->second != root; it = parent.find(root)) root = it->second;
    while (x != root) {  // path compression
      auto it = parent.find(x);
      const uint32_t next = it->second;
      it->second = root;
      x = next;
    }
    return root;
  }
  void unite(uint32_t a, uint32_t b) {
    const uint32_t ra = find(a), rb = find(b);
    if (ra != rb) parent[ra] = rb;
  }
};

class Rewriter {
 public:
  explicit Rewriter(std::span<const uint32_t> m) {
    if (m.size() < 5 || m[0] != 0x07230203) fail("not a SPIR-V module");
    header_.assign(m.begin(), m.begin() + 5);
    for (size_t i = 5; i < m.size();) {
      const uint32_t count = m[i] >> 16;
      if (count == 0 || i + count > m.size()) fail("truncated instruction");
      insts_.emplace_back(m.begin() + i, m.begin() + i + count);
      i += count;
    }
  }

  std::vector<uint32_t> run() {
    collect();
    infer_uses();
    plan_types();
    return emit();
  }

 private:
  [[noreturn]] static void fail(const std::string& msg) { throw CoopmatRewriteError("NV->KHR coopmat rewrite: " + msg); }

  bool is_type(uint32_t id) const { return types_.count(id) > 0; }
  bool has_matrix(uint32_t type) const {
    auto it = types_.find(type);
    if (it == types_.end()) return false;
    const Inst& t = insts_[it->second];
    switch (opcode(t)) {
      case kTypeNV: return true;
      case kOpTypePointer: return has_matrix(t[3]);
      case kOpTypeArray:
      case kOpTypeRuntimeArray: return has_matrix(t[2]);
      case kOpTypeStruct:
        for (size_t k = 2; k < t.size(); ++k)
          if (has_matrix(t[k])) fail("a struct holds a cooperative matrix");
        return false;
      case kOpTypeFunction:
        for (size_t k = 2; k < t.size(); ++k)
          if (has_matrix(t[k])) fail("a function takes or returns a cooperative matrix");
        return false;
      default: return false;
    }
  }
  bool is_matrix_value(uint32_t id) const { return value_type_.count(id) > 0; }

  void collect() {
    bool capability = false, memory_model = false;
    for (size_t n = 0; n < insts_.size(); ++n) {
      const Inst& i = insts_[n];
      const uint32_t op = opcode(i);
      if (op == kOpCapability && i[1] == kCapabilityNV) capability = true;
      if (op == kOpCapability && i[1] == 5345) memory_model = true;
      if (op == kOpTypeInt && i[2] == 32 && i[3] == 0 && !uint_type_) uint_type_ = i[1];
      if ((op >= 19 && op <= 39) || op == kTypeNV) {
        types_[i[1]] = n;
        continue;
      }
      if (op == kOpConstantTrue) bools_[i[2]] = true;
      if (op == kOpConstantFalse) bools_[i[2]] = false;
      if (!untyped(op) && i.size() >= 3 && is_type(i[1]) && !is_type(i[2]) && has_matrix(i[1])) {
        if (op == kOpFunctionParameter || op == kOpFunctionCall) fail("cooperative matrices passed to functions");
        value_type_[i[2]] = i[1];
      }
      if (op == kOpSpecConstantOp && i.size() > 3 && i[3] == kLengthNV) fail("OpSpecConstantOp CooperativeMatrixLength");
    }
    if (!capability) fail("the module does not declare CooperativeMatrixNV");
    if (!memory_model) fail("the module does not declare VulkanMemoryModel (KHR requires it)");
    if (!uint_type_) fail("the module has no 32-bit unsigned integer type");
    bound_ = header_[3];
  }

  void seed(uint32_t id, uint32_t use) {
    auto [it, fresh] = seeds_.emplace(id, use);
    if (!fresh && it->second != use) fail("a matrix value is used in two roles");
  }

  void infer_uses() {
    for (const Inst& i : insts_) {
      const uint32_t op = opcode(i);
      if (op == kMulAddNV) {
        seed(i[3], kUseA);
        seed(i[4], kUseB);
        seed(i[5], kUseAcc);
        seed(i[2], kUseAcc);
        continue;
      }
      if (op == kOpStore && is_matrix_value(i[1])) {
        uf_.unite(i[1], i[2]);
        continue;
      }
      if (untyped(op) || i.size() < 3 || !is_matrix_value(i[2]) || op == kLoadNV) continue;
      const size_t last = op == kOpCompositeInsert ? 4 : i.size() - 1;
      for (size_t k = 3; k <= last && k < i.size(); ++k)
        if (is_matrix_value(i[k])) uf_.unite(i[2], i[k]);
    }
    for (const auto& [id, use] : seeds_) {
      auto [it, fresh] = class_use_.emplace(uf_.find(id), use);
      if (!fresh && it->second != use)
        fail("matrix value %" + std::to_string(id) + " is needed both as " + use_name(it->second) + " and as " +
             use_name(use) + "; core KHR cannot convert between uses");
    }
  }

  static std::string use_name(uint32_t u) { return u == kUseA ? "MatrixA" : u == kUseB ? "MatrixB" : "Accumulator"; }

  uint32_t use_of(uint32_t value) {
    auto it = class_use_.find(uf_.find(value));
    return it == class_use_.end() ? kUseAcc : it->second;
  }

  void need(uint32_t type, uint32_t use) {
    if (!needed_[type].insert(use).second) return;
    const Inst& t = insts_[types_.at(type)];
    if (opcode(t) == kOpTypePointer) need(t[3], use);
    if (opcode(t) == kOpTypeArray || opcode(t) == kOpTypeRuntimeArray) need(t[2], use);
  }

  void plan_types() {
    for (const auto& [value, type] : value_type_) need(type, use_of(value));
    for (const auto& [id, n] : types_)
      if (opcode(insts_[n]) == kTypeNV && needed_[id].empty()) need(id, kUseAcc);
    for (auto& [type, uses] : needed_) {
      if (uses.empty()) continue;
      bool first = true;
      for (uint32_t u : uses) {
        ids_[{type, u}] = first ? type : bound_++;
        first = false;
      }
    }
    for (uint32_t u = 0; u < 3; ++u) use_const_[u] = bound_++;
  }

  uint32_t typed(uint32_t type, uint32_t use) const {
    auto it = ids_.find({type, use});
    if (it == ids_.end()) fail("internal: type %" + std::to_string(type) + " not planned for " + use_name(use));
    return it->second;
  }

  uint32_t layout_of(uint32_t column_major_id) const {
    auto it = bools_.find(column_major_id);
    if (it == bools_.end()) fail("a column-major operand is not an OpConstantTrue/False");
    return use_const_[it->second ? 1 : 0];
  }

  void emit_type(const Inst& t, std::vector<Inst>& out) {
    const uint32_t id = t[1];
    auto nit = needed_.find(id);
    if (nit == needed_.end() || nit->second.empty()) {
      out.push_back(t);
      return;
    }
    for (uint32_t u : nit->second) {
      const uint32_t nid = typed(id, u);
      switch (opcode(t)) {
        case kTypeNV: out.push_back(make(kTypeKHR, {nid, t[2], t[3], t[4], t[5], use_const_[u]})); break;
        case kOpTypePointer: out.push_back(make(kOpTypePointer, {nid, t[2], typed(t[3], u)})); break;
        case kOpTypeArray: out.push_back(make(kOpTypeArray, {nid, typed(t[2], u), t[3]})); break;
        case kOpTypeRuntimeArray: out.push_back(make(kOpTypeRuntimeArray, {nid, typed(t[2], u)})); break;
        default: fail("internal: unexpected type opcode");
      }
    }
  }

  uint32_t mul_add_mask(const Inst& i) const {
    uint32_t mask = 0;
    const uint32_t ops[4] = {i[3], i[4], i[5], i[2]};
    for (int k = 0; k < 4; ++k) {
      const uint32_t type = k == 3 ? i[1] : value_type_.at(ops[k]);
      const Inst& m = insts_[types_.at(type)];
      const Inst& comp = insts_[types_.at(m[2])];
      if (opcode(comp) == kOpTypeInt && comp[3] == 1) mask |= 1u << k;
    }
    return mask;
  }

  std::vector<uint32_t> emit() {
    std::vector<Inst> out;
    bool constants_placed = false;
    for (const Inst& i : insts_) {
      const uint32_t op = opcode(i);
      if (op == kOpCapability && i[1] == kCapabilityNV) {
        out.push_back(make(kOpCapability, {kCapabilityKHR}));
      } else if (op == kOpExtension && std::string(reinterpret_cast<const char*>(&i[1])) == "SPV_NV_cooperative_matrix") {
        out.push_back(make(kOpExtension, string_words("SPV_KHR_cooperative_matrix")));
      } else if (types_.count(i.size() > 1 ? i[1] : 0) && types_.at(i[1]) == static_cast<size_t>(&i - insts_.data())) {
        if (op == kTypeNV && !constants_placed) {
          for (uint32_t u = 0; u < 3; ++u) out.push_back(make(kOpConstant, {uint_type_, use_const_[u], u}));
          constants_placed = true;
        }
        emit_type(i, out);
      } else if (op == kLoadNV) {
        Inst k = make(kLoadKHR, {typed(i[1], use_of(i[2])), i[2], i[3], layout_of(i[5]), i[4]});
        k.insert(k.end(), i.begin() + 6, i.end());
        k[0] = (static_cast<uint32_t>(k.size()) << 16) | kLoadKHR;
        out.push_back(std::move(k));
      } else if (op == kStoreNV) {
        Inst k = make(kStoreKHR, {i[1], i[2], layout_of(i[4]), i[3]});
        k.insert(k.end(), i.begin() + 5, i.end());
        k[0] = (static_cast<uint32_t>(k.size()) << 16) | kStoreKHR;
        out.push_back(std::move(k));
      } else if (op == kMulAddNV) {
        std::vector<uint32_t> operands = {typed(i[1], kUseAcc), i[2], i[3], i[4], i[5]};
        if (const uint32_t mask = mul_add_mask(i)) operands.push_back(mask);
        out.push_back(make(kMulAddKHR, operands));
      } else if (op == kLengthNV) {
        const auto& uses = needed_.at(i[3]);
        if (uses.size() != 1) fail("CooperativeMatrixLength of a type used in several roles");
        out.push_back(make(kLengthKHR, {i[1], i[2], typed(i[3], *uses.begin())}));
      } else if (!untyped(op) && i.size() >= 3 && is_type(i[1]) && is_matrix_value(i[2])) {
        Inst k = i;
        k[1] = typed(i[1], use_of(i[2]));
        out.push_back(std::move(k));
      } else {
        out.push_back(i);
      }
    }
    std::vector<uint32_t> words = header_;
    words[3] = bound_;
    for (const Inst& i : out) words.insert(words.end(), i.begin(), i.end());
    return words;
  }

  std::vector<uint32_t> header_;
  std::vector<Inst> insts_;
  std::map<uint32_t, size_t> types_;              // type id -> instruction index
  std::map<uint32_t, uint32_t> value_type_;       // matrix-carrying value -> its type
  std::map<uint32_t, bool> bools_;                // OpConstantTrue/False
  std::map<uint32_t, uint32_t> seeds_;            // value -> use, from MulAdd
  std::map<uint32_t, uint32_t> class_use_;        // union-find root -> use
  std::map<uint32_t, std::set<uint32_t>> needed_; // type -> uses needed
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> ids_;  // (type, use) -> id
  uint32_t use_const_[3] = {0, 0, 0};
  uint32_t uint_type_ = 0, bound_ = 0;
  UnionFind uf_;
};

}  // namespace

std::vector<uint32_t> rewrite_coopmat_nv_to_khr(std::span<const uint32_t> nv_module) {
  return Rewriter(nv_module).run();
}

}  // namespace vkc::codegen
