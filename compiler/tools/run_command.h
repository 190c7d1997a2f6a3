// `vkc run FILE.pte`: executes a compiled program on a runtime backend (cpu today), prints the
// outputs' summaries and timing, and optionally compares them with expected outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkc/kernels/host_tensor.h"
#include "vkc/runtime/executor.h"

namespace CLI {
class App;
}

namespace vkc::tools {

struct RunArgs {
  std::string pte;
  std::string backend = "cpu";
  std::vector<std::string> data;    // --data FILE.ptd (repeatable): external data
  std::vector<std::string> inputs;  // FILE or INDEX=FILE (.pb or .bin)
  std::optional<uint64_t> random_seed;
  std::vector<std::string> input_shapes;  // NAME|INDEX=D1xD2...: a --random input's shape
  std::string expect_dir;           // output_<i>.pb or output_<i>.bin
  std::string save_dir;             // writes output_<i>.pb
  double rtol = 1e-3, atol = 1e-4;
  int repeat = 1;
  bool json = false;
  int64_t generate = -1;           // --generate N: greedy tokens after --prompt-ids
  std::string prompt_ids;          // --prompt-ids 1,2,3
  // Text in, text out (generate_command.cpp).
  std::string tokenizer;           // --tokenizer FILE|DIR
  std::optional<std::string> prompt;  // --prompt TEXT
  std::optional<int64_t> max_new_tokens;  // --max-new-tokens N
  double temperature = 0, top_p = 1;
  int64_t top_k = 0;
  uint64_t seed = 0;
  std::vector<int64_t> eos;        // --eos ID[,ID...]
  bool no_special_tokens = false;  // --no-special-tokens: no BOS added to the prompt
  bool chat = false;               // --chat: the tokenizer's chat template around the prompt
  std::string profile;             // --profile kernels|step: GPU time on stderr (vulkan backend)
};

/// The inputs of a plan of `specs` from --input, --random and --expect's folder; throws OptionError.
std::vector<kernels::HostTensor> make_inputs(const RunArgs& args, const std::vector<runtime::TensorSpec>& specs);

/// --generate N --prompt-ids ...: ids in, ids out (an encoder-decoder program's encoder inputs
/// from --input/--random).
int run_generate(const RunArgs& args);
/// --tokenizer FILE --prompt TEXT: text in, text streamed out.
int run_prompt(const RunArgs& args);

/// Adds the `run` subcommand to `app`; returns it.
CLI::App* add_run_command(CLI::App& app, RunArgs& args);
/// Runs the program. Returns 0 when it ran (and matched --expect), 1 on a mismatch. Throws on
/// errors (the caller prints them).
int run_run_command(const RunArgs& args);

}  // namespace vkc::tools
