#include "resizing_delegate.h"
#include "vkc/serializer/ptd.h"
#include "vkc/runtime/executor.h"

#include "vkc/serializer/constant_methods.h"
#include "vkc/serializer/io_names.h"

#include <fmt/format.h>

#include <algorithm>

#include <variant>

#include "kernel_call.h"
#include "vkc/serializer/program.h"

namespace vkc::runtime {

using kernels::HostTensor;
using serializer::EtTensor;

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

ir::DType dtype_of(serializer::ScalarType t) {
  using S = serializer::ScalarType;
  switch (t) {
    case S::Byte: return ir::DType::UInt8;
    case S::Char: return ir::DType::Int8;
    case S::Short: return ir::DType::Int16;
    case S::Int: return ir::DType::Int32;
    case S::Long: return ir::DType::Int64;
    case S::Half: return ir::DType::Float16;
    case S::Float: return ir::DType::Float32;
    case S::Double: return ir::DType::Float64;
    case S::Bool: return ir::DType::Bool;
    case S::BFloat16: return ir::DType::BFloat16;
  }
  throw RuntimeError(fmt::format("scalar type {} is not supported", static_cast<int>(t)));
}

bool TensorSpec::accepts(const std::vector<int64_t>& got) const {
  if (!dynamic || got.size() != shape.size()) return got == shape;
  for (size_t d = 0; d < got.size(); ++d)
    if (got[d] < 0 || got[d] > shape[d]) return false;
  return true;
}

struct Executor::State {
  serializer::PteFile pte;
  size_t plan_index = 0;
  std::vector<std::unique_ptr<DelegateInstance>> delegates;
  std::vector<std::string> kernel_ops;  // by instruction: the cpu kernel of a KernelCall
  std::vector<TensorSpec> inputs, outputs;
  NamedDataMap named;

  const serializer::ExecutionPlan& plan() const { return pte.program.plans[plan_index]; }

  const EtTensor& et_tensor(int32_t id, const char* what) const {
    const auto& values = plan().values;
    if (id < 0 || static_cast<size_t>(id) >= values.size())
      throw RuntimeError(fmt::format("{} value {} is out of range ({} values)", what, id, values.size()));
    if (const auto* t = std::get_if<EtTensor>(&values[id])) return *t;
    throw RuntimeError(fmt::format("{} value {} is not a tensor; only tensor values are supported", what, id));
  }

  TensorSpec spec_of(int32_t id, const char* what) const {
    const EtTensor& t = et_tensor(id, what);
    TensorSpec s{dtype_of(t.scalar_type), {}, {}, t.dynamism != serializer::ShapeDynamism::Static};
    for (int32_t d : t.sizes) {
      if (d < 0) throw RuntimeError(fmt::format("{} value {}: dim {} is negative", what, id, d));
      s.shape.push_back(d);
    }
    return s;
  }

  // A plan constant (constant segment), or an empty tensor of the value's dtype and shape; a
  // scalar value (int, bool or double) as a 0-d tensor, which operators run here may overwrite.
  HostTensor initial(int32_t id) const {
    if (id >= 0 && static_cast<size_t>(id) < plan().values.size()) {
      const auto& v = plan().values[id];
      if (const auto* i = std::get_if<int64_t>(&v)) return HostTensor::of<int64_t>(ir::DType::Int64, {}, {*i});
      if (const auto* b = std::get_if<bool>(&v)) return HostTensor::of<uint8_t>(ir::DType::Bool, {}, {*b});
      if (const auto* d = std::get_if<double>(&v)) return HostTensor::of<double>(ir::DType::Float64, {}, {*d});
    }
    const EtTensor& t = et_tensor(id, "plan");
    const TensorSpec s = spec_of(id, "plan");
    if (t.data_buffer_idx == 0) return HostTensor{s.dtype, s.shape, {}};
    const auto& constants = pte.program.constants;
    if (t.data_buffer_idx > constants.size())
      throw RuntimeError(fmt::format("value {}: constant buffer {} is out of range", id, t.data_buffer_idx));
    return HostTensor{s.dtype, s.shape, constants[t.data_buffer_idx - 1]};
  }
};

Executor::Executor(std::unique_ptr<State> s) : s_(std::move(s)) {}
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;
Executor::~Executor() = default;

std::optional<int64_t> Executor::metadata_int(const std::string& name) const {
  const std::vector<int64_t> v = metadata_ints(name);
  if (v.size() != 1) return std::nullopt;
  return v[0];
}

std::vector<int64_t> Executor::metadata_ints(const std::string& name) const {
  for (const auto& plan : s_->pte.program.plans) {
    if (plan.name != name) continue;
    const auto value = serializer::constant_method_value(plan);
    if (!value) return {};
    if (const auto* i = std::get_if<int64_t>(&*value)) return {*i};
    if (const auto* list = std::get_if<std::vector<int64_t>>(&*value)) return *list;
  }
  return {};
}

Executor Executor::load(const std::filesystem::path& pte, Backend& backend, const std::string& method,
                        const std::vector<std::filesystem::path>& data) {
  return from_pte(serializer::read_program(pte, data), backend, method);
}

Executor Executor::from_pte(serializer::PteFile pte, Backend& backend, const std::string& method) {
  auto s = std::make_unique<State>();
  s->pte = std::move(pte);
  const auto& plans = s->pte.program.plans;
  size_t i = 0;
  while (i < plans.size() && plans[i].name != method) ++i;
  if (i == plans.size()) throw RuntimeError(fmt::format("the program has no execution plan '{}'", method));
  s->plan_index = i;
  for (const auto& nd : s->pte.program.named_data) s->named.emplace(nd.key, nd.data);
  const auto& plan = s->plan();
  for (int32_t id : plan.inputs) s->inputs.push_back(s->spec_of(id, "plan input"));
  for (int32_t id : plan.outputs) s->outputs.push_back(s->spec_of(id, "plan output"));
  if (auto it = s->named.find(serializer::io_names_key(method)); it != s->named.end())
    if (auto names = serializer::decode_io_names(it->second.bytes());
        names && names->inputs.size() == s->inputs.size() && names->outputs.size() == s->outputs.size()) {
      for (size_t k = 0; k < s->inputs.size(); ++k) s->inputs[k].name = names->inputs[k];
      for (size_t k = 0; k < s->outputs.size(); ++k) s->outputs[k].name = names->outputs[k];
    }
  for (size_t d = 0; d < plan.delegates.size(); ++d) {
    const auto& del = plan.delegates[d];
    if (!backend.can_run(del.id))
      throw RuntimeError(fmt::format("delegate {}: backend '{}' cannot run '{}' delegates", d, backend.name(), del.id));
    try {
      s->delegates.push_back(has_dynamic_dims(del) ? make_resizing_delegate(backend, del, s->named)
                                                   : backend.init(del, s->named));
    } catch (const std::exception& e) {
      throw RuntimeError(fmt::format("delegate {} ({}): {}", d, backend.name(), e.what()));
    }
  }
  const auto& chain = plan.instructions;
  s->kernel_ops.resize(chain.size());
  for (size_t at = 0; at < chain.size(); ++at) {
    const auto* k = std::get_if<serializer::KernelCall>(&chain[at]);
    if (!k) continue;
    if (k->op_index < 0 || static_cast<size_t>(k->op_index) >= plan.operators.size())
      throw RuntimeError(fmt::format("instruction {}: operator {} does not exist", at, k->op_index));
    try {
      s->kernel_ops[at] = detail::kernel_call_operator(plan.operators[k->op_index]);
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("instruction {}: KernelCall: {}", at, e.what()));
    }
  }
  return Executor(std::move(s));
}

bool Executor::has_method(const std::string& name) const {
  const auto& plans = s_->pte.program.plans;
  return std::any_of(plans.begin(), plans.end(), [&](const auto& p) { return p.name == name; });
}

Executor Executor::method(const std::string& name, Backend& backend) const { return from_pte(s_->pte, backend, name); }

const std::vector<TensorSpec>& Executor::inputs() const { return s_->inputs; }
const std::vector<TensorSpec>& Executor::outputs() const { return s_->outputs; }
size_t Executor::num_delegates() const { return s_->delegates.size(); }

// A program compiled for several input sizes fails a run whose sizes none of its variants has.
std::string Executor::no_variant(const std::vector<HostTensor>& inputs) const {
  std::string shapes;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (s_->inputs[k].dynamic)
      shapes += fmt::format("{}input {} [{}]", shapes.empty() ? "" : ", ", k, fmt::join(inputs[k].shape, ","));
  return fmt::format("no variant of the program takes {} (vkc inspect lists the sizes it was compiled for)",
                     shapes.empty() ? "these inputs" : shapes);
}

DecodeLoop* Executor::decode_loop(const std::vector<HostTensor>& inputs, size_t tokens_input, size_t position_input,
                                  int64_t vocab, std::vector<const HostTensor*>& args) {
  const auto& plan = s_->plan();
  // One delegate call whose arguments are the plan's inputs, then its outputs (in any order).
  if (plan.instructions.size() != 1 || inputs.size() != plan.inputs.size() || plan.outputs.empty()) return nullptr;
  const auto* call = std::get_if<serializer::DelegateCall>(&plan.instructions[0]);
  if (!call || call->delegate_index < 0 || static_cast<size_t>(call->delegate_index) >= s_->delegates.size() ||
      call->args.size() != plan.inputs.size() + plan.outputs.size())
    return nullptr;
  const auto index_in = [](const std::vector<int32_t>& ids, int32_t id) -> std::optional<size_t> {
    const auto it = std::find(ids.begin(), ids.end(), id);
    return it == ids.end() ? std::nullopt : std::optional<size_t>(static_cast<size_t>(it - ids.begin()));
  };
  const size_t n_in = plan.inputs.size();
  std::vector<int32_t> call_inputs(call->args.begin(), call->args.begin() + static_cast<std::ptrdiff_t>(n_in));
  std::vector<int32_t> call_outputs(call->args.begin() + static_cast<std::ptrdiff_t>(n_in), call->args.end());
  args.assign(n_in, nullptr);
  DecodeLoopSpec spec;
  spec.vocab = vocab;
  spec.input_shapes.resize(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    const auto at = index_in(call_inputs, plan.inputs[i]);
    if (!at) return nullptr;
    const TensorSpec& want = s_->inputs[i];
    if (inputs[i].dtype != want.dtype || !want.accepts(inputs[i].shape) ||
        inputs[i].data.size() != inputs[i].numel() * ir::dtype_size(want.dtype))
      throw RuntimeError(fmt::format("input {}: expected {} [{}], got {} [{}]", i, ir::dtype_name(want.dtype),
                                     fmt::join(want.shape, ","), ir::dtype_name(inputs[i].dtype),
                                     fmt::join(inputs[i].shape, ",")));
    args[*at] = &inputs[i];
    spec.input_shapes[*at] = inputs[i].shape;
    if (i == tokens_input) spec.tokens = *at;
    if (i == position_input) spec.position = *at;
  }
  for (int32_t o : plan.outputs)
    if (!index_in(call_outputs, o)) return nullptr;
  spec.logits = *index_in(call_outputs, plan.outputs[0]);
  try {
    return s_->delegates[call->delegate_index]->decode_loop(spec);
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("delegate {}: {}", call->delegate_index, e.what()));
  }
}

bool Executor::prepare_decode_loop(const std::vector<HostTensor>& inputs, size_t tokens_input, size_t position_input,
                                   int64_t vocab, size_t steps) {
  std::vector<const HostTensor*> args;
  DecodeLoop* loop = decode_loop(inputs, tokens_input, position_input, vocab, args);
  if (!loop) return false;
  try {
    loop->prepare(steps);
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("decode loop: {}", e.what()));
  }
  return true;
}

bool Executor::run_decode_loop(const std::vector<HostTensor>& inputs, size_t tokens_input, size_t position_input,
                               int64_t vocab, size_t steps, const std::function<bool(int64_t)>& on_token) {
  std::vector<const HostTensor*> args;
  DecodeLoop* loop = decode_loop(inputs, tokens_input, position_input, vocab, args);
  if (!loop) return false;
  try {
    loop->run(args, steps, on_token);
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("decode loop: {}", e.what()));
  }
  return true;
}

std::vector<HostTensor> Executor::run(const std::vector<HostTensor>& inputs) {
  const auto& plan = s_->plan();
  if (inputs.size() != s_->inputs.size())
    throw RuntimeError(fmt::format("the program takes {} input(s), {} given", s_->inputs.size(), inputs.size()));
  std::vector<HostTensor> values(plan.values.size());
  std::vector<bool> set(plan.values.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = s_->inputs[i];
    if (inputs[i].dtype != spec.dtype || !spec.accepts(inputs[i].shape))
      throw RuntimeError(fmt::format("input {}: expected {} [{}]{}, got {} [{}]", i, ir::dtype_name(spec.dtype),
                                     fmt::join(spec.shape, ","), spec.dynamic ? " or smaller" : "",
                                     ir::dtype_name(inputs[i].dtype), fmt::join(inputs[i].shape, ",")));
    if (inputs[i].data.size() != inputs[i].numel() * ir::dtype_size(spec.dtype))
      throw RuntimeError(
          fmt::format("input {}: {} bytes of data for {} elements", i, inputs[i].data.size(), inputs[i].numel()));
    values[plan.inputs[i]] = inputs[i];
    set[plan.inputs[i]] = true;
  }
  auto value = [&](int32_t id) -> HostTensor& {
    if (id < 0 || static_cast<size_t>(id) >= values.size()) throw RuntimeError(fmt::format("value {} is out of range", id));
    if (!set[id]) {
      values[id] = s_->initial(id);
      set[id] = true;
    }
    return values[id];
  };
  const auto& chain = plan.instructions;
  for (size_t pc = 0; pc < chain.size();) {
    const size_t at = pc++;
    if (const auto* call = std::get_if<serializer::DelegateCall>(&chain[at])) {
      if (call->delegate_index < 0 || static_cast<size_t>(call->delegate_index) >= s_->delegates.size())
        throw RuntimeError(fmt::format("instruction {}: delegate {} does not exist", at, call->delegate_index));
      std::vector<HostTensor*> args;
      for (int32_t id : call->args) args.push_back(&value(id));
      try {
        s_->delegates[call->delegate_index]->execute(args);
      } catch (const std::exception& e) {
        throw RuntimeError(fmt::format("delegate {}: {}", call->delegate_index, e.what()));
      }
    } else if (const auto* k = std::get_if<serializer::KernelCall>(&chain[at])) {
      try {
        detail::run_kernel_call(plan, *k, s_->kernel_ops[at], value);
      } catch (const std::exception& e) {
        throw RuntimeError(fmt::format("instruction {} (KernelCall {}): {}", at, s_->kernel_ops[at], e.what()));
      }
    } else if (const auto* m = std::get_if<serializer::MoveCall>(&chain[at])) {
      value(m->to) = value(m->from);
    } else if (const auto* j = std::get_if<serializer::JumpFalseCall>(&chain[at])) {
      const auto& v = plan.values.at(j->cond);
      if (std::holds_alternative<serializer::EtNull>(v)) throw RuntimeError(no_variant(inputs));
      if (!std::holds_alternative<bool>(v) && !std::holds_alternative<EtTensor>(v))
        throw RuntimeError(fmt::format("instruction {}: jump condition {} is not a bool", at, j->cond));
      if (value(j->cond).get_i(0) == 0) pc = static_cast<size_t>(j->destination);
    } else if (const auto* f = std::get_if<serializer::FreeCall>(&chain[at])) {
      value(f->value) = HostTensor{};
    }
  }
  std::vector<HostTensor> out;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    HostTensor& t = value(plan.outputs[i]);
    // An output a branch moves in (MoveCall) has that branch's shape; the plan's is its bound.
    const bool dynamic = s_->et_tensor(plan.outputs[i], "plan output").dynamism != serializer::ShapeDynamism::Static;
    const TensorSpec& spec = s_->outputs[i];
    const int64_t numel = dynamic ? t.numel() : spec.numel();
    if (t.data.size() != static_cast<size_t>(numel) * ir::dtype_size(t.dtype) || (!dynamic && t.dtype != spec.dtype))
      throw RuntimeError(fmt::format("output {} was never written", i));
    out.push_back(t);
  }
  return out;
}

}  // namespace vkc::runtime
