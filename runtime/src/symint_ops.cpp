#include "symint_ops.h"

#include <fmt/format.h>

namespace vkc::runtime {

const std::vector<std::string>& symint_operators() {
  static const std::vector<std::string> names{"sym_size.int", "add", "sub", "mul", "floordiv"};
  return names;
}

int64_t eval_symint_op(const CallArgs& c, const std::string& name,
                       const std::function<std::vector<int64_t>(size_t)>& dims_of) {
  if (c.num_args() != 3) c.fail(fmt::format("{} takes two arguments and a SymInt output", name));
  if (name == "sym_size.int") {
    const std::vector<int64_t> dims = dims_of(0);
    int64_t d = c.int_arg(1);
    if (d < 0) d += static_cast<int64_t>(dims.size());
    if (d < 0 || d >= static_cast<int64_t>(dims.size()))
      c.fail(fmt::format("dim {} is out of range for a rank-{} tensor", c.int_arg(1), dims.size()));
    return dims[d];
  }
  const int64_t a = c.int_arg(0), b = c.int_arg(1);
  if (name == "add") return a + b;
  if (name == "sub") return a - b;
  if (name == "mul") return a * b;
  if (name == "floordiv") {
    if (b == 0) c.fail("floordiv by zero");
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
  c.fail(fmt::format("{} is not a SymInt operator", name));
}

}  // namespace vkc::runtime
