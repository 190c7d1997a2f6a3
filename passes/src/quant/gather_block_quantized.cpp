#include "gather_block_quantized.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../constants.h"
#include "../folding/evaluate.h"

namespace vkc::passes::quant {

ir::Value* expand_gather_block_quantized(ir::Graph& g, ir::Node* n, std::string& why) {
  if (n->num_inputs() < 3 || !n->input(0) || !n->input(1) || !n->input(2)) {
    why = "GatherBlockQuantized needs data, indices and scales";
    return nullptr;
  }
  const int64_t bits = n->attr_int("bits", 4), block = n->attr_int("block_size", 128);
  // The table's contents: constants, or computed from constants (the builder reshapes the LM head's bytes).
  auto data = folding::evaluate(n->input(0), {});
  auto scales = folding::evaluate(n->input(2), {});
  std::optional<kernels::HostTensor> zeros;
  if (n->num_inputs() > 3 && n->input(3)) zeros = folding::evaluate(n->input(3), {});
  if (!data || !scales || (n->num_inputs() > 3 && n->input(3) && !zeros)) {
    why = "GatherBlockQuantized's data, scales and zero points must be constants";
    return nullptr;
  }
  const auto& ds = data->shape;
  const auto& ss = scales->shape;
  const int64_t rank = static_cast<int64_t>(ds.size());
  const int64_t gather_axis = n->attr_int("gather_axis", 0), quantize_axis = n->attr_int("quantize_axis", 1);
  if (rank != 2 || gather_axis != 0 || (quantize_axis != 1 && quantize_axis != -1)) {
    why = fmt::format("GatherBlockQuantized of a rank-{} table along axis {} quantized along {}: only a [V, D] table "
                      "gathered by rows and quantized along D is computed",
                      rank, gather_axis, quantize_axis);
    return nullptr;
  }
  if ((bits != 4 && bits != 8) || data->dtype != ir::DType::UInt8 || block <= 0) {
    why = fmt::format("GatherBlockQuantized with {} bits in {} data: only 4 or 8 bits in uint8 bytes are computed", bits,
                      ir::dtype_name(data->dtype));
    return nullptr;
  }
  const int64_t per_byte = 8 / bits, rows = ds[0], cols = ds[1] * per_byte;
  const int64_t blocks = (cols + block - 1) / block;
  if (ss.size() != 2 || ss[0] != rows || ss[1] != blocks || !ir::is_float(scales->dtype)) {
    why = fmt::format("GatherBlockQuantized's scales are [{}], not [{}, {}] floats", fmt::join(ss, ","), rows, blocks);
    return nullptr;
  }
  const uint8_t* q = data->data.data();
  auto nibble = [&](const uint8_t* bytes, int64_t i) -> int64_t {
    return bits == 8 ? bytes[i] : (bytes[i / 2] >> (4 * (i % 2))) & 0xF;
  };
  const int64_t zp_row = (blocks + per_byte - 1) / per_byte;  // zero points: bytes per row
  if (zeros && (zeros->dtype != ir::DType::UInt8 || zeros->numel() != rows * zp_row)) {
    why = "GatherBlockQuantized's zero points are not packed uint8 bytes of one per block";
    return nullptr;
  }
  std::vector<float> table(static_cast<size_t>(rows * cols));
  const int64_t middle = int64_t{1} << (bits - 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) {
      const int64_t b = k / block;
      const int64_t z = zeros ? nibble(zeros->data.data() + r * zp_row, b) : middle;
      table[r * cols + k] = static_cast<float>(scales->get_f(r * blocks + b) * static_cast<double>(nibble(q + r * ds[1], k) - z));
    }
  const ir::DType dt = scales->dtype;
  ir::Value* w = add_float_constant(g, g.unique_name(n->name() + "_table"), {rows, cols}, table, dt);
  const ir::Value* idx = n->input(1);
  std::vector<int64_t> out = idx->type().known() && idx->shape().is_static() ? idx->shape().sizes() : std::vector<int64_t>{};
  if (!idx->type().known() || !idx->shape().is_static()) {
    why = "GatherBlockQuantized's indices have no static shape";
    return nullptr;
  }
  out.push_back(cols);
  return add_onnx_node(g, n, "Gather", {w, n->input(1)}, {dt, ir::Shape::of(out)}, {{"axis", int64_t{0}}});
}

}  // namespace vkc::passes::quant
