#!/usr/bin/env python3
"""torch.matmul reference for the coopmat figures: N^3 fp16 matmul TFLOP/s on the same GPU.

    python3 torch_matmul.py [N] [ITERS] [fp16acc]
fp16acc: cuBLAS may accumulate in fp16 (torch.backends.cuda.matmul.allow_fp16_accumulation),
the reference for kernels with fp16 accumulators. Prints one JSON line. Times ITERS products with CUDA events after warm-up.
"""
import json
import sys

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 20
fp16acc = len(sys.argv) > 3 and sys.argv[3] == "fp16acc"
if fp16acc:
    torch.backends.cuda.matmul.allow_fp16_accumulation = True
a = torch.randn(n, n, device="cuda", dtype=torch.float16)
b = torch.randn(n, n, device="cuda", dtype=torch.float16)
for _ in range(5):
    torch.matmul(a, b)
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(iters):
    torch.matmul(a, b)
end.record()
torch.cuda.synchronize()
ms = start.elapsed_time(end) / iters
print(json.dumps({"what": "torch.matmul fp16" + (" (fp16 accumulation allowed)" if fp16acc else ""), "n": n, "ms": round(ms, 4),
                  "tflops": round(2 * n ** 3 / (ms * 1e-3) / 1e12, 1),
                  "device": torch.cuda.get_device_name(0), "torch": torch.__version__}))
