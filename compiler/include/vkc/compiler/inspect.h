// What a .pte holds, read back through the serializer's readers: `vkc inspect`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "vkc/serializer/compile_options.h"

namespace vkc::compiler {

struct DelegateReport {
  size_t plan = 0;           // execution plan index
  size_t index = 0;          // index in that plan's delegate list
  std::string backend;       // BackendDelegate.id
  bool called = false;       // some DelegateCall in the plan's chain names it
  uint64_t payload_bytes = 0;
  std::vector<serializer::CompileSpec> compile_specs;
  serializer::CompileOptions options;  // decoded compile_specs (Vulkan delegates)
  // VkGraph contents (Vulkan delegates)
  std::map<std::string, size_t> ops;       // runtime operator -> calls
  std::map<std::string, size_t> families;  // operator family -> calls
  size_t values = 0, tensors = 0, constants = 0, inputs = 0, outputs = 0;
  uint64_t constant_bytes = 0;
  size_t constants_not_found = 0;  // named data in neither the program nor the external data read with it
  std::map<std::string, size_t> representations;  // "texture3d/channels_packed" -> tensors
  size_t memory_objects = 0;     // distinct mem_obj_id >= 0
  std::vector<std::string> shaders;  // embedded SPIR-V variants (VkGraph.shaders), by name
  uint64_t shader_bytes = 0;
  size_t shared_tensors = 0;     // tensors bound to a shared memory object
};

/// A plan input: its shape (the bound where dynamic) and, for a program compiled for several
/// sizes of a dim, the sizes its variants take per dim (read from the shape tests in the chain).
struct PlanInputReport {
  std::vector<int64_t> shape;
  bool dynamic = false;
  std::map<int64_t, std::vector<int64_t>> sizes;  // dim -> sizes tested, in chain order
  /// A bounded dynamic dim of a program that resizes (--dim NAME=MIN..MAX): dim -> its range,
  /// read from the delegates' tables (serializer/dynamic_dims.h).
  struct Range {
    std::string name;
    int64_t min = 0, max = 0;
  };
  std::map<int64_t, Range> ranges;
};

struct PlanReport {
  std::string name;
  size_t values = 0, inputs = 0, outputs = 0, instructions = 0, kernel_calls = 0, delegate_calls = 0;
  /// Control flow: JumpFalseCalls and MoveCalls (a program split on run-time If conditions).
  size_t jumps = 0, moves = 0;
  std::vector<std::string> operators;  // KernelCall operators "name.overload"
  std::vector<int64_t> non_const_buffer_sizes;
  std::vector<PlanInputReport> input_shapes;
  /// A constant method's value ("8", "true", "[2, 7]"): metadata such as get_max_seq_len.
  std::optional<std::string> constant;
};

struct InspectReport {
  std::string path;
  uint64_t file_size = 0, program_size = 0, segment_base_offset = 0, segment_data_size = 0;
  std::vector<uint64_t> segment_sizes;
  size_t named_data = 0;
  uint64_t named_data_bytes = 0, constant_segment_bytes = 0;
  std::vector<PlanReport> plans;
  std::vector<DelegateReport> delegates;
  /// External data files (.ptd) read with the program; their entries count in named_data too.
  struct ExternalData {
    std::string path;
    uint64_t file_size = 0;
    size_t entries = 0;
    uint64_t bytes = 0;
  };
  std::vector<ExternalData> external;
};

/// Reads and decodes `pte`; throws serializer::SerializeError (one line) on a corrupt file.
/// Its external data: the files `data` names, or without any, FILE.ptd beside it when that exists.
InspectReport inspect_file(const std::filesystem::path& pte, const std::vector<std::filesystem::path>& data = {});
/// The same for a .pte in memory; `label` stands for the path in the report and in errors.
InspectReport inspect_bytes(std::span<const uint8_t> pte, std::string label = "<pte bytes>");

/// `vkc inspect --json`.
std::string inspect_json(const InspectReport& r);
/// `vkc inspect`.
std::string inspect_text(const InspectReport& r);

}  // namespace vkc::compiler
