"""A stride-1 transposed convolution is a convolution of the same input with the weight's in and out
channels swapped and its window flipped, padded k-1-p: cuDNN's forward kernels against its backward-data
kernels (what eager and our programs call) on the dev set's stride-1 transposed convolutions, NCHW and
channels-last, with cuDNN's heuristics and with its benchmark mode, TF32 as eager allows it. Prints one
line per shape: the two forms' largest difference and each one's median (CUDA events). On the GPU machine:
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
                row += [f"CL convT {med(lambda: convt(xc, wc, padding=p)):.3f} ms", f"CL conv {med(lambda: conv(xc, wfc, padding=pf)):.3f} ms"]
        print(" | ".join(row), flush=True)
        del x, y1, y2; torch.cuda.empty_cache()
