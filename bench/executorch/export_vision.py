#!/usr/bin/env python3
"""Exports the vision models of the executor benchmark (issue table: torchvision mobilenet_v2,
squeezenet1_1, mobilenet_v3_small, timm mobilevit_xxs, a tiny ViT) with random weights to
OUT/*.onnx, static shapes, batch 1, for bench/executorch/compare.sh --models OUT.

Needs torch, torchvision and (for mobilevit) timm: run it where they are (the GPU machine).
Random weights keep it offline; the kernels' speed does not depend on the values.
  python3 bench/executorch/export_vision.py OUT
"""
import os
import sys

import torch


def tiny_vit():
    import torch.nn as nn

    class Vit(nn.Module):
        def __init__(self, d=64, layers=2, heads=4, patch=8, size=64, classes=10):
            super().__init__()
            self.patch = nn.Conv2d(3, d, patch, patch)
            self.pos = nn.Parameter(torch.randn(1, (size // patch) ** 2, d) * 0.02)
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, dropout=0.0)
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            t = self.patch(x).flatten(2).transpose(1, 2) + self.pos
            return self.head(self.enc(t).mean(1))

    return Vit(), (1, 3, 64, 64)


def models():
    import torchvision.models as tv
    yield "mobilenet_v2", lambda: (tv.mobilenet_v2(weights=None), (1, 3, 224, 224))
    yield "squeezenet1_1", lambda: (tv.squeezenet1_1(weights=None), (1, 3, 224, 224))
    yield "mobilenet_v3_small", lambda: (tv.mobilenet_v3_small(weights=None), (1, 3, 224, 224))
    yield "resnet18", lambda: (tv.resnet18(weights=None), (1, 3, 224, 224))

    def mobilevit():
        import timm
        return timm.create_model("mobilevit_xxs", pretrained=False), (1, 3, 256, 256)

    yield "mobilevit_xxs", mobilevit
    yield "tiny_vit", tiny_vit


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "vision_models"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)  # the fused encoder-layer op has no ONNX form
    for name, make in models():
        try:
            model, shape = make()
        except Exception as e:  # a missing package skips that model
            print(f"skip {name}: {e}", file=sys.stderr)
            continue
        model.eval()
        path = os.path.join(out, f"{name}.onnx")
        with torch.no_grad():
            torch.onnx.export(model, (torch.randn(*shape),), path, input_names=["input"],
                              output_names=["output"], opset_version=17, dynamo=False)
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
