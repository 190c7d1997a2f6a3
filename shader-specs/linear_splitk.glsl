#version 450
// Linear layers with K split across a workgroup per output (vkc_linear_fp.glslh, vkc_linear_main.glslh).
#define VKC_SPLIT_K
#include "vkc_linear_fp.glslh"
