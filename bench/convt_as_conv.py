"""A stride-1 transposed convolution is a convolution of the same input with the weight's in and out
channels swapped and its window flipped, padded k-1-p: cuDNN's forward kernels against its backward-data
kernels (what eager and our programs call) on the dev set's stride-1 transposed convolutions, NCHW and
channels-last, with cuDNN's heuristics and with its benchmark mode, TF32 as eager allows it. Prints one
line per shape: the two forms' largest difference and each one's median (CUDA events), and what the
conversions of a lone convolution run channels-last cost; first, level 1's lone forward convolutions in
both layouts. On the GPU machine:
    python3 bench/convt_as_conv.py"""
import torch
import torch.nn.functional as F

torch.backends.cudnn.allow_tf32 = True
CASES = [  # name, N, Cin, Cout, kernel, spatial, padding
    ("L1/64 1d", 64, 128, 128, (3,), (65536,), (0,)),
    ("L1/69 2d", 64, 64, 128, (3, 5), (128, 256), (0, 0)),
    ("L1/78 2d", 8, 32, 32, (3, 7), (512, 1024), (1, 3)),
    ("L2/13 3d", 16, 16, 64, (3, 3, 3), (32, 128, 128), (1, 1, 1)),
]


def med(f, n=15):
    """Median milliseconds of n calls of f after three warm-up calls, each timed by CUDA events."""
    ts = []
    for _ in range(n + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        end.record()
        torch.cuda.synchronize()
        ts.append(start.elapsed_time(end))
    ts = sorted(ts[3:])
    return ts[len(ts) // 2]


LONE = [  # lone forward convolutions of level 1: name, N, Cin, Cout, kernel, spatial
    ("L1/56 2d", 8, 64, 128, (5, 7), (512, 256)),
    ("L1/60 3d", 16, 3, 64, (3, 5, 7), (64, 64, 64)),
]
for name, n, ci, co, k, sp in LONE:
    d = len(k)
    conv = [F.conv1d, F.conv2d, F.conv3d][d - 1]
    mf = torch.channels_last if d == 2 else torch.channels_last_3d
    x = torch.randn(n, ci, *sp, device="cuda")
    w = torch.randn(co, ci, *k, device="cuda") * 0.05
    with torch.no_grad():
        y = conv(x, w)
        xc, wc = x.to(memory_format=mf), w.to(memory_format=mf)
        print(" | ".join([f"{name} lone", f"NCHW {med(lambda: conv(x, w)):.3f} ms", f"CL {med(lambda: conv(xc, wc)):.3f} ms",
                          f"copies {med(lambda: x.to(memory_format=mf)) + med(lambda: conv(xc, wc).contiguous()) - med(lambda: conv(xc, wc)):.3f} ms"]),
              flush=True)
    del x, y, xc
    torch.cuda.empty_cache()
for bench in (False, True):
    torch.backends.cudnn.benchmark = bench
    for name, n, ci, co, k, sp, p in CASES:
        d = len(k)
        convt = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][d - 1]
        conv = [F.conv1d, F.conv2d, F.conv3d][d - 1]
        x = torch.randn(n, ci, *sp, device="cuda")
        w = torch.randn(ci, co, *k, device="cuda") * 0.05
        wf = w.transpose(0, 1).flip(list(range(2, 2 + d))).contiguous()
        pf = tuple(kk - 1 - pp for kk, pp in zip(k, p))
        with torch.no_grad():
            y1 = convt(x, w, padding=p)
            y2 = conv(x, wf, padding=pf)
            diff = (y1 - y2).abs().max().item()
            row = [f"{name} bench={bench}", f"diff {diff:.2e}", f"convT {med(lambda: convt(x, w, padding=p)):.3f} ms",
                   f"conv {med(lambda: conv(x, wf, padding=pf)):.3f} ms"]
            if d >= 2:
                mf = torch.channels_last if d == 2 else torch.channels_last_3d
                xc, wc, wfc = x.to(memory_format=mf), w.to(memory_format=mf), wf.to(memory_format=mf)
                row += [f"CL convT {med(lambda: convt(xc, wc, padding=p)):.3f} ms",
                        f"CL conv {med(lambda: conv(xc, wfc, padding=pf)):.3f} ms",
                        # what a lone convolution run channels-last adds: its input in, its output out
                        f"copies {med(lambda: x.to(memory_format=mf)) + med(lambda: y1.to(memory_format=mf)):.3f} ms"]
        print(" | ".join(row), flush=True)
        del x, y1, y2; torch.cuda.empty_cache()
