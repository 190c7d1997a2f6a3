#!/usr/bin/env python3
"""Shader bundles with one part of the matrix-vector linears left out (wrong outputs, true timings),
for `bench/gpu/ab.sh` to time against the build's own bundle (`vkc+VKC_SHADER_BUNDLE=pN.vksl`):

    python3 bench/gpu/probe_bundles.py VKC_SHADERS OUT_DIR     (VKC_SHADERS: build/codegen/vkc-shaders)

writes OUT_DIR/p1.vksl.xz .. p5.vksl.xz from a copy of shader-specs/ whose vkc_linear_gemv.glslh
has GEMV_PROBE N defined and these edits (each fails loudly when the header no longer has the
code it edits):
    1  no input staging: each chunk stages a constant (one load of input 0 keeps the binding)
    2  no weight loads: a constant per row and chunk (one load of chunk 0 keeps the bindings)
    3  no integer dot products (the int4 `_dot` kernels): the weights' first word added instead
    4  no reduction across the workgroup: each team's invocation 0 writes its own sums
    5  no scale loads: a constant per row and chunk (one load of chunk 0's keeps the bindings)
The bundles carry the build's variants by name (same bindings and push constants), so the same
binary runs them. bench/README.md ("Thirteenth session", "Fourteenth session") has the call and
what it measured.
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EDITS = [
    ("""      w[u][r] = chunk_weights(ns[r], c);
      sc[u][r] = chunk_scale(ns[r], c);""",
     """#if GEMV_PROBE == 2
      w[u][r] = CHUNK_T(float(ns[r] + c));
      sc[u][r] = 1.0;
      if (u == 0 && r == 0) {
        w[u][r] += chunk_weights(0, 0);
        sc[u][r] += chunk_scale(0, 0);
      }
#elif GEMV_PROBE == 5
      w[u][r] = chunk_weights(ns[r], c);
      sc[u][r] = float(ns[r] + c);
      if (u == 0 && r == 0) sc[u][r] += chunk_scale(0, 0);
#else
      w[u][r] = chunk_weights(ns[r], c);
      sc[u][r] = chunk_scale(ns[r], c);
#endif"""),
    ("""      vec4 v0 = vec4(0.0), v1 = vec4(0.0);
      if (t < span_words) {""",
     """#if GEMV_PROBE == 1
      {
#if defined(STORAGE_buffer)
        const int probe_in = floatBitsToInt(normed4(vec4(float(t_in[0])), 0).x) & 1;
#else
        const int probe_in = floatBitsToInt(normed4(vec4(imageLoad(t_in, ivec3(0))), 0).x) & 1;
#endif
        if (t < span_words) {
          gemv_q16[gemv_x_at(wci, wj)] = ivec4(wci ^ probe_in);
          gemv_word_sum[t] = 0u;
          if (wj == 0) gemv_q16_scale[wci] = 1.0;
        }
      }
#else
      vec4 v0 = vec4(0.0), v1 = vec4(0.0);
      if (t < span_words) {"""),
    ("""        if (wj == 0) gemv_q16_scale[wci] = m / GEMV_Q16_MAX;
      }
""",
     """        if (wj == 0) gemv_q16_scale[wci] = m / GEMV_Q16_MAX;
      }
#endif
"""),
    ("""      for (int e4 = t; e4 < texels; e4 += LOCAL_SIZE_X) {
        const int k = base * CHUNK + 4 * e4;""",
     """      for (int e4 = t; e4 < texels; e4 += LOCAL_SIZE_X) {
#if GEMV_PROBE == 1
#if defined(STORAGE_buffer)
        const float probe_in = float(t_in[0]);
#else
        const float probe_in = vec4(imageLoad(t_in, ivec3(0))).x;
#endif
        gemv_x[gemv_x_at(e4 / (CHUNK / 4), e4 % (CHUNK / 4))] = vec4(e4) + normed4(vec4(probe_in), 0);
        continue;
#endif
        const int k = base * CHUNK + 4 * e4;"""),
    ("""        for (int r = 0; r < 4; ++r) acc[r] += float(chunk_dot_q16(w[u][r], xq) - offset) * (sc[u][r] * cscale);
#if DUAL
        for (int r = 0; r < 4; ++r) acc_up[r] += float(chunk_dot_q16(wu[u][r], xq) - offset) * (scu[u][r] * cscale);
#endif""",
     """#if GEMV_PROBE == 3
        for (int r = 0; r < 4; ++r) acc[r] += float(w[u][r].x + uint(xq[0].x + offset)) * sc[u][r];
#if DUAL
        for (int r = 0; r < 4; ++r) acc_up[r] += float(wu[u][r].x + uint(xq[0].x)) * scu[u][r];
#endif
#else
        for (int r = 0; r < 4; ++r) acc[r] += float(chunk_dot_q16(w[u][r], xq) - offset) * (sc[u][r] * cscale);
#if DUAL
        for (int r = 0; r < 4; ++r) acc_up[r] += float(chunk_dot_q16(wu[u][r], xq) - offset) * (scu[u][r] * cscale);
#endif
#endif"""),
    ("""#if GEMV_SUBGROUP
  // Each subgroup's sums first""",
     """#if GEMV_PROBE == 4
  if (lt != 0 || !live || !team_live) return;
  const int first = team, parts = 1, all = 1;
  gemv_partial[team] = acc;
#if DUAL
  gemv_partial_up[team] = acc_up;
#endif
#if NORM && !defined(GEMV_NORM_IN_PARAMS)
  gemv_partial_sq[0] = gemv_squares + 1.0;
#endif
#elif GEMV_SUBGROUP
  // Each subgroup's sums first"""),
]
GUARD = "#ifndef VKC_LINEAR_GEMV_GLSLH\n#define VKC_LINEAR_GEMV_GLSLH\n"


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tool, out = Path(sys.argv[1]), Path(sys.argv[2])
    specs = Path(__file__).resolve().parents[2] / "shader-specs"
    header = (specs / "include/vkc_linear_gemv.glslh").read_text()
    for old, new in EDITS:
        if header.count(old) != 1:
            sys.exit(f"probe_bundles.py: vkc_linear_gemv.glslh no longer has:\n{old}")
        header = header.replace(old, new)
    if header.count(GUARD) != 1:
        sys.exit("probe_bundles.py: vkc_linear_gemv.glslh lost its include guard")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, 2, 3, 4, 5):
            d = Path(tmp) / f"p{n}"
            shutil.copytree(specs, d)
            (d / "include/vkc_linear_gemv.glslh").write_text(header.replace(GUARD, f"{GUARD}#define GEMV_PROBE {n}\n"))
            bundle = Path(tmp) / f"p{n}.vksl"
            subprocess.run([str(tool), "--specs", str(d), "--bundle", str(bundle), "--cache", str(Path(tmp) / "cache")],
                           check=True)
            with open(out / f"p{n}.vksl.xz", "wb") as f:
                subprocess.run(["xz", "-6", "-c", str(bundle)], stdout=f, check=True)
            print(out / f"p{n}.vksl.xz")


if __name__ == "__main__":
    main()
