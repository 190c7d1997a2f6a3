// A model compiled for several sizes of its symbolic dims (--dim NAME=V1,V2,...): one compile per
// combination of the sizes, joined by tests of the inputs' sizes as the program runs
// (serializer::ShapeTest), so that one .pte takes each size.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "branch_programs.h"

namespace vkc::compiler::detail {

/// Symbolic dim name -> the size it is compiled for.
using DimSizes = std::map<std::string, int64_t>;

/// Every combination of the sizes listed per dim (the first dim's sizes vary slowest). Throws
/// CompileError for more than kMaxBranchPrograms combinations.
std::vector<DimSizes> size_combinations(const std::map<std::string, std::vector<int64_t>>& sizes);

/// "sequence=5, batch=1": a combination as the options spell it.
std::string describe(const DimSizes& dims);

/// Joins one Split per combination (a plain compile: no tree, one leaf) into one Split whose tree
/// tests the inputs' sizes in turn and runs the variant they match; no match runs nothing. Every
/// input dim that differs between the variants is tested. Throws CompileError when two variants
/// take the same input shapes or together hold more than kMaxBranchPrograms programs.
Split join_size_variants(std::vector<Split> variants, const std::vector<DimSizes>& combinations);

}  // namespace vkc::compiler::detail
