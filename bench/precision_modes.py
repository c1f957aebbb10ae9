#!/usr/bin/env python3
"""Which precision eager PyTorch really uses for each library call, with its defaults: the
TF32 flags, and each heavy operator's max abs error against an fp64 ground truth computed
on the same GPU, under the defaults and with TF32 forced off and on. A candidate compared at
fp32's 1e-4 against a reference that ran in TF32 fails however exact it is; this says which
operators that concerns.

On the GPU machine:  python3 bench/precision_modes.py --out bench/results/precision_modes_DATE_GPU"""
from __future__ import annotations

import argparse
import json
import platform

import torch
import torch.nn.functional as F


def cases() -> list[tuple[str, callable, list[torch.Tensor]]]:
    g = torch.Generator(device="cuda").manual_seed(0)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", generator=g)

    return [
        ("mm 4096x4096x4096", lambda a, b: a @ b, [r(4096, 4096), r(4096, 4096)]),
        ("linear 8192x4096 -> 4096 (addmm)", lambda x, w, b: F.linear(x, w, b), [r(8192, 4096), r(4096, 4096) * 0.02, r(4096)]),
        ("bmm 64x512x512 @ 64x512x512", torch.bmm, [r(64, 512, 512), r(64, 512, 512)]),
        ("conv2d 64->128 3x3, 32x64x56x56", lambda x, w: F.conv2d(x, w, padding=1), [r(32, 64, 56, 56), r(128, 64, 3, 3) * 0.05]),
        ("conv1d 128->256 k5, 64x128x1024", lambda x, w: F.conv1d(x, w, padding=2), [r(64, 128, 1024), r(256, 128, 5) * 0.05]),
        ("conv3d 16->32 3x3x3, 8x16x32x64x64", lambda x, w: F.conv3d(x, w, padding=1), [r(8, 16, 32, 64, 64), r(32, 16, 3, 3, 3) * 0.05]),
        ("conv_transpose2d 64->32 k4 s2, 16x64x64x64", lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
         [r(16, 64, 64, 64), r(64, 32, 4, 4) * 0.05]),
        ("depthwise conv2d 256ch 3x3, 32x256x56x56", lambda x, w: F.conv2d(x, w, padding=1, groups=256),
         [r(32, 256, 56, 56), r(256, 1, 3, 3) * 0.3]),
    ]


def max_err(fn, args, truth) -> float:
    with torch.no_grad():
        out = fn(*args)
    torch.cuda.synchronize()
    return float((out.double() - truth).abs().max())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="path prefix: writes PREFIX.json and PREFIX.md")
    a = ap.parse_args()
    defaults = {"cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
                "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                "float32_matmul_precision": torch.get_float32_matmul_precision()}
    rows = []
    for name, fn, args in cases():
        with torch.no_grad():
            truth = fn(*[t.double() for t in args])
        saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        default = max_err(fn, args, truth)
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
        fp32 = max_err(fn, args, truth)
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
        tf32 = max_err(fn, args, truth)
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
        scale = float(truth.abs().max())
        mode = "tf32" if abs(default - tf32) < abs(default - fp32) else "fp32"
        rows.append({"op": name, "default_err": default, "fp32_err": fp32, "tf32_err": tf32, "max_abs_output": scale,
                     "eager_default_mode": mode, "fp32_passes_1e-4": default <= 1e-4 + 1e-4 * scale})
        print(f"{name:45s} default {default:.2e}  fp32 {fp32:.2e}  tf32 {tf32:.2e}  -> {mode}", flush=True)
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "python": platform.python_version()}
    with open(a.out + ".json", "w") as f:
        json.dump({"environment": env, "defaults": defaults, "rows": rows}, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write(f"# Eager PyTorch's precision per library call\n\n{env}\n\nDefaults: {defaults}\n\n"
                "Max abs error against an fp64 ground truth on the same GPU.\n\n"
                "| operator | default | TF32 off | TF32 on | max abs output | eager's mode |\n|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['op']} | {r['default_err']:.2e} | {r['fp32_err']:.2e} | {r['tf32_err']:.2e} | "
                    f"{r['max_abs_output']:.1f} | {r['eager_default_mode']} |\n")


if __name__ == "__main__":
    main()
