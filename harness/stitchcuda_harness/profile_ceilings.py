"""The roofline's ceilings for this GPU, measured rather than taken from a datasheet (design
§10, §12): memory bandwidth (bandwidth.py: the fastest of PyTorch's copy and sum and our own
streams; the field keeps its name copyGBps) and GEMM throughput in fp32 (TF32 off), TF32 and bf16
through PyTorch's cuBLAS, on random data. The fp32 ceiling is also measured with the program the
host sends (`gemmProgram`: the built-in brain's cuBLASLt configuration search, whose GEMMs ran past
PyTorch's heuristic pick) and is the faster of the two. The host caches the result per GPU
(profiling/RooflineCache) so this runs once."""
from __future__ import annotations

import ctypes
import datetime
import os
import tempfile
from typing import Any, Optional

import torch

from .bandwidth import measure_bandwidth
from .environment_info import driver_version, gpu_name
from .errors import HarnessError
from .nvcc_build import DEFAULT_CACHE_DIR, Builder
from .timer import fastest_of_ten

# The searched GEMM's size: its search screens hundreds of configurations three runs each, which
# at 8192^3 (21 ms a run in fp32) would take most of a minute; 4096^3 takes a few seconds.
_SEARCHED_GEMM = 4096


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


def _searched_gemm_tflops(device: torch.device, program: str, cache_dir: str) -> tuple[Optional[float], str]:
    """The fp32 rate of `program`'s stitch_gemm_ceiling at _SEARCHED_GEMM^3 (the fastest of ten
    runs after its search), or None and why."""
    with tempfile.TemporaryDirectory(prefix="gemm-ceiling-") as folder:  # the library lands in the build cache
        source = os.path.join(folder, "gemm_ceiling.cu")
        with open(source, "w", encoding="utf-8") as f:
            f.write(program)
        result = Builder(cache_dir).build(source)
    if not result.ok or not result.library:
        return None, f"the GEMM ceiling program did not build: {result.failure_text()}"
    lib = ctypes.CDLL(result.library)
    lib.stitch_gemm_ceiling.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.stitch_gemm_ceiling.restype = ctypes.c_int
    n = _SEARCHED_GEMM
    gen = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(n, n, device=device, generator=gen)
    b = torch.randn(n, n, device=device, generator=gen)
    d = torch.empty(n, n, device=device)
    stream = torch.cuda.current_stream(device).cuda_stream

    def run() -> None:
        status = lib.stitch_gemm_ceiling(n, a.data_ptr(), b.data_ptr(), d.data_ptr(), stream)
        if status != 0:
            raise HarnessError("ceiling_failed", f"stitch_gemm_ceiling returned {status}")

    run()  # the search
    seconds = fastest_of_ten(run)
    if not torch.allclose(d, a @ b, rtol=1e-3, atol=1e-2):
        return None, "the GEMM ceiling program's product differs from torch.matmul's"
    return 2.0 * n ** 3 / seconds / 1e12, ""


def measure_ceilings(device: torch.device, params: dict[str, Any]) -> dict[str, Any]:
    if device.type != "cuda":
        raise HarnessError("invalid_params", "measureCeilings needs a CUDA device; none is available here")
    n = int(params.get("gemmSize", 8192))
    reps = int(params.get("repetitions", 10))
    copy_mb = int(params.get("copyMegabytes", 1024))
    cache_dir = params.get("cacheDir") or DEFAULT_CACHE_DIR
    with torch.no_grad():
        memory = measure_bandwidth(device, copy_mb, cache_dir)
        fp32 = _gemm_tflops(device, n, torch.float32, False, reps)
        tf32 = _gemm_tflops(device, n, torch.float32, True, reps)
        bf16 = _gemm_tflops(device, n, torch.bfloat16, False, reps)
        searched, searched_error = (None, "no gemmProgram sent")
        if params.get("gemmProgram"):
            searched, searched_error = _searched_gemm_tflops(device, str(params["gemmProgram"]), cache_dir)
    props = torch.cuda.get_device_properties(device)
    return {"gpu": gpu_name(device), "driver": driver_version(), "torch": torch.__version__,
            "multiprocessors": props.multi_processor_count,
            "copyGBps": memory.gbps, "fp32Tflops": max(fp32, searched or 0.0), "tf32Tflops": tf32, "bf16Tflops": bf16,
            "method": {"memory": "fastest of ten runs of each of PyTorch's copy and sum and our own read and copy streams",
                       "memoryStream": memory.stream, "memoryProbeError": memory.probe_error, "copyMegabytes": copy_mb,
                       "gemmSize": n, "repetitions": reps, "data": "randn",
                       "fp32": {"pytorchTflops": fp32, "searchedTflops": searched, "searchedSize": _SEARCHED_GEMM,
                                "searchedError": searched_error},
                       "timer": "cuda events around back-to-back calls after 3 warm-ups"},
            "measuredAt": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
