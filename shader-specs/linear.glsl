#version 450
// Linear layers, one invocation per output (vkc_linear_fp.glslh).
#include "vkc_linear_fp.glslh"
