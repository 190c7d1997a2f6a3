// The vkc library API: compile ONNX models into ExecuTorch .pte programs for Vulkan GPUs,
// inspect .pte files and run them (cpu reference kernels or a Vulkan device). See docs/library.md.
//
//   vkc::CompileOptions o;
//   o.input_shapes["image"] = {1, 3, 224, 224};
//   vkc::CompileResult r = vkc::compile("model.onnx", "model.pte", o);
//   if (!r) for (const auto& d : r.diagnostics) std::cerr << d.str() << "\n";
//
// Errors are returned as diagnostics; no exception escapes the API except std::bad_alloc.
// No global state: concurrent compiles on several threads are safe.
#pragma once

#include "vkc/api/compile.h"
#include "vkc/api/diagnostic.h"
#include "vkc/api/inspect.h"
#include "vkc/api/options.h"
#include "vkc/api/progress.h"
#include "vkc/api/run.h"
#include "vkc/api/version.h"
