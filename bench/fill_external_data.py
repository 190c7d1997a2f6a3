#!/usr/bin/env python3
"""Writes random weights into the external-data file a graph-only ONNX model references.

bench/export_llm_shapes.py keeps the graph of a full-size model and drops its weights: each float
initializer is an external-data reference (location, offset, length). This writes the file those
references name, next to the model, with Gaussian values (std 0.02; fp16 and bf16 rounded from
them), so vkc can compile the model as if its checkpoint were there. For speed the values are
slices of one random pool rather than fresh draws.

Tied embeddings: torch.onnx's optimizer folds a tied output projection's Transpose(embedding) into a
second initializer; a real checkpoint then holds the same values twice. A float matrix [D, V] whose
transpose has the shape of an embedding table (a [V, D] matrix a Gather reads) is written as that
transpose, so the weights stay tied as they would be.

usage: fill_external_data.py MODEL.onnx   (needs python3-onnx and numpy: PYENV_VERSION=system python3)
"""
import os
import sys

import numpy as np
import onnx


def main():
    path = sys.argv[1]
    m = onnx.load(path, load_external_data=False)
    rng = np.random.default_rng(0)
    pool = (rng.standard_normal(1 << 24, dtype=np.float32) * 0.02).astype(np.float32)
    files = {}
    written = 0
    ext = [t for t in m.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    by_shape = {tuple(t.dims): t for t in ext if t.data_type == onnx.TensorProto.FLOAT and len(t.dims) == 2}
    tables = {n.input[0] for n in m.graph.node if n.op_type == "Gather"}
    tied = {}  # name of a [D, V] copy -> the [V, D] table it transposes
    for shape, t in by_shape.items():
        twin = by_shape.get((shape[1], shape[0]))
        if twin is not None and t.name in tables and shape[0] != shape[1]:
            tied[twin.name] = t
    values = {}  # the tables written, kept for their copies
    for k, t in enumerate(m.graph.initializer):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        loc = os.path.join(os.path.dirname(os.path.abspath(path)), info["location"])
        if loc not in files:
            files[loc] = open(loc, "wb")
        f = files[loc]
        offset, length = int(info.get("offset", 0)), int(info["length"])
        f.seek(offset)
        if t.name in tied:
            src = values.get(tied[t.name].name)
            if src is None:
                raise SystemExit(f"{t.name}: its tied table {tied[t.name].name} comes later in the file")
            f.write(np.ascontiguousarray(src.reshape(tied[t.name].dims).T).tobytes())
        elif t.data_type == onnx.TensorProto.FLOAT:
            n = length // 4
            start = (k * 7919) % (len(pool) // 2)
            chunks = []
            remaining = n
            while remaining > 0:
                take = min(remaining, len(pool) - start)
                chunks.append(pool[start:start + take])
                remaining -= take
                start = 0
            for c in chunks:
                f.write(c.tobytes())
            if t.name in {v.name for v in tied.values()}:
                values[t.name] = np.concatenate(chunks)
        elif t.data_type in (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16):
            n = length // 2
            v = np.resize(pool, n)
            if t.data_type == onnx.TensorProto.FLOAT16:
                f.write(v.astype(np.float16).tobytes())
            else:
                f.write((v.view(np.uint32) >> 16).astype(np.uint16).tobytes())
        else:
            raise SystemExit(f"{t.name}: external data of type {t.data_type} cannot be made up")
        written += length
    for f in files.values():
        f.close()
    print(f"{path}: wrote {written / 2**30:.2f} GiB of random weights into {', '.join(files)}")


if __name__ == "__main__":
    main()
