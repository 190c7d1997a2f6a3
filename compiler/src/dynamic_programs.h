// A model compiled for a range of sizes of its symbolic dims (--dim NAME=MIN..MAX) as one program
// whose graph resizes as it runs. vkc's passes fold shapes to constants, so the model is compiled
// at a few probe sizes instead and the programs are compared: they must be the same program but
// for integers (tensor dims, integer arguments) that are affine functions of the dims, exact at
// every probe. The program of the largest sizes is kept; its inputs and outputs become
// dynamic-bound, each integer argument that follows the dims becomes a SymInt computed at the head
// of the delegate's chain from an input's size (sym_size.int, mul, add, as ExecuTorch's dynamic
// exports do), and each delegate carries the table of its dynamic tensor dims for vkc's runtime
// (serializer/dynamic_dims.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "size_variants.h"
#include "vkc/serializer/program.h"

namespace vkc::compiler::detail {

struct DimRange {
  std::string name;
  int64_t min = 1, max = 1;
};

/// The sizes to compile at: every dim at its max; then each dim in turn at max - 1; then every dim
/// at its min (a check of the fit, left out where it would repeat a probe).
std::vector<DimSizes> probe_sizes(const std::vector<DimRange>& ranges);

/// The programs `build` compiles at probe_sizes(ranges) (one at a time), merged into the first made
/// dynamic. Throws CompileError naming the first place where the programs differ in more than
/// affine integers, a constant that changes with the size, a dim no delegate input carries, or a
/// node outside the Vulkan delegates that sees a dynamic tensor. `notes` gets a summary line.
serializer::Program merge_probes(const std::function<serializer::Program(const DimSizes&)>& build,
                                 const std::vector<DimRange>& ranges, std::vector<std::string>& notes);

}  // namespace vkc::compiler::detail
