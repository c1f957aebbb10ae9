"""The roofline's two ceilings for this GPU, measured rather than taken from a datasheet (design
§10, §12): memory bandwidth (the faster of a device copy, bytes read + written, and a read-only
sum; the field keeps its name copyGBps) and GEMM throughput in fp32
(TF32 off), TF32 and bf16 through PyTorch's cuBLAS, on random data. The host caches the result
per GPU (profiling/RooflineCache) so this runs once."""
from __future__ import annotations

import datetime
from typing import Any

import torch

from .environment_info import driver_version, gpu_name
from .errors import HarnessError
from .timer import measure_bandwidth_gbps


def _gemm_tflops(device: torch.device, n: int, dtype: torch.dtype, tf32: bool, reps: int) -> float:
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        gen = torch.Generator(device=device).manual_seed(0)
        a = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
        b = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
        for _ in range(3):
            torch.matmul(a, b)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(reps):
            torch.matmul(a, b)
        end.record()
        torch.cuda.synchronize()
        seconds = start.elapsed_time(end) / 1e3 / reps
        return 2.0 * n ** 3 / seconds / 1e12
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def measure_ceilings(device: torch.device, params: dict[str, Any]) -> dict[str, Any]:
    if device.type != "cuda":
        raise HarnessError("invalid_params", "measureCeilings needs a CUDA device; none is available here")
    n = int(params.get("gemmSize", 8192))
    reps = int(params.get("repetitions", 10))
    copy_mb = int(params.get("copyMegabytes", 1024))
    with torch.no_grad():
        copy = measure_bandwidth_gbps(device, copy_mb)
        fp32 = _gemm_tflops(device, n, torch.float32, False, reps)
        tf32 = _gemm_tflops(device, n, torch.float32, True, reps)
        bf16 = _gemm_tflops(device, n, torch.bfloat16, False, reps)
    props = torch.cuda.get_device_properties(device)
    return {"gpu": gpu_name(device), "driver": driver_version(), "torch": torch.__version__,
            "multiprocessors": props.multi_processor_count,
            "copyGBps": copy, "fp32Tflops": fp32, "tf32Tflops": tf32, "bf16Tflops": bf16,
            "method": {"memory": "fastest of ten device copies and ten sums", "copyMegabytes": copy_mb,
                       "gemmSize": n, "repetitions": reps, "data": "randn",
                       "timer": "cuda events around back-to-back calls after 3 warm-ups"},
            "measuredAt": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
