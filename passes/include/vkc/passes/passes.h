// Every pass, one per file under src/. The pipeline (src/pipeline.cpp) orders them.
#pragma once

#include "vkc/passes/pass.h"

namespace vkc::passes {

/// Drops Identity and inference-mode Dropout, rerouting their uses.
void remove_identity(ir::Graph& g, PassContext& ctx);
/// Folds BatchNormalization into the Conv or Gemm that feeds it.
void fuse_batch_norm(ir::Graph& g, PassContext& ctx);
/// Turns ONNX operators into ExecuTorch Vulkan runtime operators where a lowering exists.
void lower_to_vulkan(ir::Graph& g, PassContext& ctx);
/// Merges convolution followed by relu/clamp into et_vk.conv_with_clamp.
void fuse_conv_clamp(ir::Graph& g, PassContext& ctx);
/// Removes nodes whose outputs nothing uses.
void eliminate_dead_code(ir::Graph& g, PassContext& ctx);

}  // namespace vkc::passes
