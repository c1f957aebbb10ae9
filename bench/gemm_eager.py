"""Eager PyTorch's kernel for each of bench/gemm_algos.cu's shapes, and its GPU time with the L2
flushed before each run (median of 21), to set beside that probe's cublasSgemm column.
    python3 bench/gemm_eager.py"""
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

SHAPES = [("54 matmul_square", 1, 3072, 3072, 3072, False), ("55 mm_irregular", 1, 4099, 1000, 777, False),
          ("56 tall_skinny", 1, 65536, 128, 256, False), ("57 small_k_wide", 1, 8192, 8192, 64, False),
          ("58 bmm", 64, 512, 512, 512, False), ("59 broadcast", 1, 16384, 1024, 1024, False),
          ("60 linear_bias", 1, 8192, 2048, 1024, True), ("86 fc1", 1, 8192, 1024, 512, True),
          ("86 fc2", 1, 8192, 1024, 1024, True), ("86 fc3", 1, 8192, 256, 1024, True),
          ("90 fc1", 1, 4096, 3072, 768, True), ("90 fc2", 1, 4096, 768, 3072, True)]

flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, device="cuda")


def median_us(fn, reps=21):
    fn()
    times = []
    for _ in range(reps):
        flush.sum()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return sorted(times)[reps // 2]


print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, allow_tf32={torch.backends.cuda.matmul.allow_tf32}")
print("| task | eager µs | eager kernels |\n|---|---|---|")
with torch.no_grad():
    for name, batch, m, n, k, linear in SHAPES:
        if linear:
            x, w, bias = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda"), torch.randn(n, device="cuda")
            fn = lambda: F.linear(x, w, bias)  # noqa: E731
        elif batch > 1:
            a, b = torch.randn(batch, m, k, device="cuda"), torch.randn(batch, k, n, device="cuda")
            fn = lambda: torch.bmm(a, b)  # noqa: E731
        else:
            a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
            fn = lambda: torch.mm(a, b)  # noqa: E731
        us = median_us(fn)
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            fn()
            torch.cuda.synchronize()
        names = sorted({e.name[:90] for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA})
        print(f"| {name} | {us:.1f} | {'; '.join(names)} |", flush=True)
