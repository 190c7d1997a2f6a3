#include "vkc/api/run.h"

#include <fmt/format.h>

#include <new>
#include <optional>

#include "error_diagnostic.h"
#include "vkc/runtime/backend.h"
#include "vkc/runtime/generate.h"
#include "vkc/runtime/vulkan.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc {
namespace {

std::unique_ptr<runtime::Backend> make_backend(const RunOptions& o) {
  if (o.backend == "vulkan") {
    runtime::VulkanOptions v = runtime::vulkan_options_from_env();
    v.validation = v.validation || o.validation;
    return runtime::make_vulkan_backend(v);
  }
  return runtime::make_backend(o.backend);
}

// Calls f(); an exception other than std::bad_alloc becomes the one error diagnostic.
template <typename F>
std::optional<Diagnostic> guarded(F f) {
  try {
    f();
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return detail::error_from_message(e.what());
  } catch (...) {
    return detail::error_from_message("run failed with an unknown exception");
  }
}

}  // namespace

struct Session::State {
  std::vector<Diagnostic> diagnostics;
  std::unique_ptr<runtime::Backend> backend;  // outlives exec (declared first)
  std::optional<runtime::Executor> exec;
};

Session::Session(std::unique_ptr<State> s) : s_(std::move(s)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() {
  if (s_) s_->exec.reset();  // delegates before the backend's device
}

Session Session::open(const std::filesystem::path& pte, const RunOptions& options) {
  auto s = std::make_unique<State>();
  if (auto err = guarded([&] {
        s->backend = make_backend(options);
        s->exec.emplace(runtime::Executor::load(
            pte, *s->backend, options.method,
            std::vector<std::filesystem::path>(options.data_files.begin(), options.data_files.end())));
      }))
    s->diagnostics.push_back(*err);
  return Session(std::move(s));
}

Session Session::open(std::span<const uint8_t> pte, const RunOptions& options) {
  auto s = std::make_unique<State>();
  if (auto err = guarded([&] {
        auto copy = std::make_shared<std::vector<uint8_t>>(pte.begin(), pte.end());
        serializer::PteFile file = serializer::read_pte_bytes(*copy, copy);
        s->backend = make_backend(options);
        s->exec.emplace(runtime::Executor::from_pte(std::move(file), *s->backend, options.method));
      }))
    s->diagnostics.push_back(*err);
  return Session(std::move(s));
}

bool Session::ok() const { return s_ && s_->exec.has_value(); }
// A moved-from Session (s_ null) reads as one that failed to open, with nothing to say.
const std::vector<Diagnostic>& Session::diagnostics() const {
  static const std::vector<Diagnostic> none;
  return s_ ? s_->diagnostics : none;
}
const std::vector<TensorSpec>& Session::inputs() const {
  static const std::vector<TensorSpec> none;
  return ok() ? s_->exec->inputs() : none;
}
const std::vector<TensorSpec>& Session::outputs() const {
  static const std::vector<TensorSpec> none;
  return ok() ? s_->exec->outputs() : none;
}

// Why a call on a session that did not open (or was moved from) cannot run: its open() error.
std::vector<Diagnostic> Session::not_open() const {
  std::vector<Diagnostic> d = s_ ? s_->diagnostics : std::vector<Diagnostic>{};
  if (d.empty()) d.push_back(detail::error_from_message("the session is not open"));
  return d;
}

RunResult Session::run(const std::vector<Tensor>& inputs) {
  RunResult r;
  if (!ok()) {
    r.diagnostics = not_open();
    return r;
  }
  if (auto err = guarded([&] {
        const auto& specs = s_->exec->inputs();
        if (inputs.size() != specs.size())
          throw runtime::RuntimeError(
              fmt::format("the program takes {} input(s), {} given", specs.size(), inputs.size()));
        std::vector<Tensor> shaped = inputs;
        for (size_t i = 0; i < specs.size(); ++i) {
          if (shaped[i].dtype != specs[i].dtype)
            throw runtime::RuntimeError(fmt::format("input {}: {} given, the program takes {}", i,
                                                    ir::dtype_name(shaped[i].dtype), ir::dtype_name(specs[i].dtype)));
          if (specs[i].dynamic && specs[i].accepts(shaped[i].shape)) continue;  // one of the sizes it takes
          if (shaped[i].numel() != specs[i].numel())
            throw runtime::RuntimeError(fmt::format("input {}: [{}] given, the program takes [{}]{}", i,
                                                    fmt::join(shaped[i].shape, ","), fmt::join(specs[i].shape, ","),
                                                    specs[i].dynamic ? " or smaller" : ""));
          shaped[i].shape = specs[i].shape;
        }
        r.outputs = s_->exec->run(shaped);
      })) {
    r.diagnostics.push_back(*err);
    return r;
  }
  r.ok = true;
  return r;
}

GenerateResult Session::generate(const std::vector<int64_t>& prompt, size_t n) { return generate(prompt, n, {}); }

GenerateResult Session::generate(const std::vector<int64_t>& prompt, size_t n, const std::vector<Tensor>& encoder_inputs) {
  GenerateResult r;
  if (!ok()) {
    r.diagnostics = not_open();
    return r;
  }
  if (auto err = guarded([&] {
        runtime::GenerateOptions options;
        options.max_new_tokens = n;
        if (s_->exec->has_method(serializer::kEncoderMethod)) {
          runtime::Executor encoder = s_->exec->method(serializer::kEncoderMethod, *s_->backend);
          options.context = runtime::encode(encoder, *s_->exec, encoder_inputs);
        } else if (!encoder_inputs.empty()) {
          throw runtime::RuntimeError("encoder inputs given, but the program has no encoder method");
        }
        const runtime::GenerateResult g = runtime::generate(*s_->exec, prompt, options);
        r.tokens = g.tokens;
        r.prefill_tokens_per_s = g.prefill_tokens_per_s();
        r.decode_tokens_per_s = g.decode_tokens_per_s();
        r.device_loop = g.device_loop;
      })) {
    r.diagnostics.push_back(*err);
    return r;
  }
  r.ok = true;
  return r;
}

namespace detail {
TextResult generate_text(runtime::Executor& exec, const tokenizer::Tokenizer& tok, const std::string& prompt,
                         const TextGenerateOptions& options);
}

TextResult Session::generate_text(const tokenizer::Tokenizer& tokenizer, const std::string& prompt,
                                  const TextGenerateOptions& options) {
  TextResult r;
  if (!ok()) {
    r.diagnostics = not_open();
    return r;
  }
  if (auto err = guarded([&] { r = detail::generate_text(*s_->exec, tokenizer, prompt, options); })) {
    r = TextResult();
    r.diagnostics.push_back(*err);
  }
  return r;
}

RunResult run(const std::filesystem::path& pte, const std::vector<Tensor>& inputs, const RunOptions& options) {
  Session s = Session::open(pte, options);
  return s.run(inputs);
}

RunResult run(std::span<const uint8_t> pte, const std::vector<Tensor>& inputs, const RunOptions& options) {
  Session s = Session::open(pte, options);
  return s.run(inputs);
}

}  // namespace vkc
