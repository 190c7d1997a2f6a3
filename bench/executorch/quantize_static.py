#!/usr/bin/env python3
"""Quantizes fp32 ONNX models the way a user of onnxruntime's tools does: quantize_static, QDQ
format, per-channel int8 weights, uint8 activations (onnxruntime's defaults) or int8 ones
(--int8-activations), calibrated on seeded random inputs. For each IN/NAME.onnx it writes
OUT/NAME_qdq.onnx and OUT/NAME_qdq/test_data_set_0 (one input, onnxruntime's output of the
quantized model as output_0.pb, the fp32 model's as fp32_output_0.pb), so that

  vkc compile OUT/NAME_qdq.onnx -o m.pte && vkc run m.pte --expect OUT/NAME_qdq/test_data_set_0

checks vkc against onnxruntime's own int8 result, and bench/executorch/compare.sh --models OUT
times it against the ExecuTorch runtime. Needs onnx, onnxruntime (with its quantization tools)
and numpy: run it where they are (the GPU machine).

  python3 bench/executorch/quantize_static.py IN_DIR OUT_DIR [--int8-activations] [--calibration N]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def static_shape(model):
    i = model.graph.input[0]
    return i.name, [d.dim_value for d in i.type.tensor_type.shape.dim]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--int8-activations", action="store_true")
    ap.add_argument("--calibration", type=int, default=8)
    ap.add_argument("--only", default="", help="comma-separated model names")
    a = ap.parse_args()
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    os.makedirs(a.out, exist_ok=True)
    names = sorted(f[:-5] for f in os.listdir(a.inp) if f.endswith(".onnx"))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    for name in names:
        src = os.path.join(a.inp, name + ".onnx")
        model = onnx.load(src)
        if len(model.graph.input) != 1:
            print(f"skip {name}: {len(model.graph.input)} inputs", file=sys.stderr)
            continue
        input_name, shape = static_shape(model)
        if any(d <= 0 for d in shape):
            print(f"skip {name}: input shape {shape} is not static", file=sys.stderr)
            continue
        rng = np.random.default_rng(0)

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.items = iter([{input_name: rng.standard_normal(shape).astype(np.float32)}
                                   for _ in range(a.calibration)])

            def get_next(self):
                return next(self.items, None)

        dst = os.path.join(a.out, name + "_qdq.onnx")
        try:
            quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                            weight_type=QuantType.QInt8,
                            activation_type=QuantType.QInt8 if a.int8_activations else QuantType.QUInt8)
        except Exception as e:  # a model the quantizer cannot take is reported, not fatal
            print(f"skip {name}: quantize_static failed: {e}", file=sys.stderr)
            continue
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        data = os.path.join(a.out, name + "_qdq", "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, input_name).SerializeToString())
        for path, out_name in ((dst, "output_0.pb"), (src, "fp32_output_0.pb")):
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            y = sess.run(None, {input_name: x})[0]
            with open(os.path.join(data, out_name), "wb") as f:
                f.write(numpy_helper.from_array(y, sess.get_outputs()[0].name).SerializeToString())
        print(f"wrote {dst}", file=sys.stderr)


if __name__ == "__main__":
    main()
