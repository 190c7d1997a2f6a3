#!/usr/bin/env python3
"""Makes ExecuTorch's Vulkan shader generator leave out a shader that glslc cannot compile
(printing 'SKIPPED shader (compile failed): ...') instead of failing the whole build.

Debian bookworm's glslang lacks GL_KHR_cooperative_matrix and some newer extensions that a few
of ET-VK's shaders use. Used by bench/executorch/build.sh on its own copy of the sources.
"""
import re
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()
if "SKIPPED shader (compile failed)" in text:
    sys.exit(0)
# Both `raise RuntimeError(f"{err_msg_base} ...") from e...` statements in the compile step.
pattern = re.compile(
    r"^([ \t]*)raise RuntimeError\(\s*(f\"\{err_msg_base\} \{(e|e_no_opt)\.stderr\}\")\s*\)\s*from \3", re.M)


def skip(m):
    indent = m.group(1)
    return (f'{indent}sys.stderr.write("SKIPPED shader (compile failed): " + {m.group(2)} + "\\n")\n'
            f"{indent}return (None, gen_out_path)")


text, n = pattern.subn(skip, text)
if n != 2:
    sys.exit(f"patch_shader_gen.py: expected 2 compile-failure raises in {path}, found {n}; "
             "the generator changed, update this patch")
if not re.search(r"^import sys$", text, re.M):
    text = "import sys\n" + text
open(path, "w", encoding="utf-8").write(text)
