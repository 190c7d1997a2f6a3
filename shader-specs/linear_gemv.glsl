#version 450
// Linear layers for one or a few rows: a workgroup per 4 outputs of a row reads the weights 16 bytes
// at a time (vkc_linear_fp.glslh, vkc_linear_gemv.glslh).
#define VKC_GEMV
#include "vkc_linear_fp.glslh"
