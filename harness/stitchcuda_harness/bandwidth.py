"""The roofline's memory ceiling (design §10): the fastest stream of bytes this GPU was seen to
move, used to flag impossible speedups and to read a candidate's share of its floor. Measured on
one 512 MiB buffer as the fastest of ten runs of each of: PyTorch's device copy (bytes read +
written), PyTorch's sum (bytes read only), and our own read-only and copy kernels in a few shapes
(probes/stream_probe.cu, built with nvcc). A read-only stream runs faster than a copy, which turns
the bus around, and our generated kernels outran both of PyTorch's (a reduction read 104% of the
copy floor, bench/results/kernelbench_2026-11-28b_h200; HingeLoss 104% of the faster of copy and
sum, kernelbench_2026-11-29_h200): the ceiling is the best of the streams we know how to write."""
from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass
from typing import Optional

import torch

from .nvcc_build import DEFAULT_CACHE_DIR, Builder, PendingBuild
from .timer import fastest_of_ten

PROBE_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes", "stream_probe.cu")
# Loads in flight per thread x blocks per SM x threads per block: 32 shapes of each of the read and
# the copy, about 0.2 s in all on 512 MiB.
_UNROLLS = (1, 2, 4, 8)
_BLOCKS_PER_SM = (2, 4, 8, 16)
_THREADS = (256, 512)

_lock = threading.Lock()
_pending: dict[str, PendingBuild] = {}
_libraries: dict[str, ctypes.CDLL] = {}


@dataclass
class Bandwidth:
    gbps: float
    stream: str  # the stream that set it, e.g. "stream_probe read, unroll 4, 8 blocks/SM x 256"
    probe_error: str = ""  # why our own streams were not measured (no nvcc, a failed build)


def start_probe_build(cache_dir: Optional[str] = None) -> None:
    """Starts building the stream probe in the background (cached on disk by content), so the
    first measurement does not wait for nvcc where the caller had other work to do first."""
    _probe_build(cache_dir or DEFAULT_CACHE_DIR)


def _probe_build(cache_dir: str) -> PendingBuild:
    with _lock:
        if cache_dir not in _pending:
            _pending[cache_dir] = Builder(cache_dir).start(PROBE_SOURCE)
        return _pending[cache_dir]


def _probe_library(cache_dir: str) -> tuple[Optional[ctypes.CDLL], str]:
    result = _probe_build(cache_dir).result()
    if not result.ok or not result.library:
        return None, f"the stream probe did not build: {result.failure_text()}"
    with _lock:
        if result.library not in _libraries:
            lib = ctypes.CDLL(result.library)
            lib.stitch_stream.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
            lib.stitch_stream.restype = ctypes.c_int
            _libraries[result.library] = lib
        return _libraries[result.library], ""


def measure_bandwidth(device: torch.device, megabytes: int = 512, cache_dir: Optional[str] = None) -> Bandwidth:
    if device.type != "cuda":
        return Bandwidth(0.0, "no CUDA device")
    n = megabytes * 1024 * 1024 // 4
    with torch.cuda.device(device):
        a = torch.empty(n, dtype=torch.float32, device=device).fill_(1.0)
        b = torch.empty_like(a)
        best = [(2 * n * 4 / fastest_of_ten(lambda: b.copy_(a)), "PyTorch copy"),
                (n * 4 / fastest_of_ten(lambda: a.sum()), "PyTorch sum")]
        lib, error = _probe_library(cache_dir or DEFAULT_CACHE_DIR)
        if lib is not None:
            try:
                best += _probe_streams(lib, device, a, b)
            except RuntimeError as exc:  # PyTorch's streams still give a ceiling
                error = str(exc)
    gbps, stream = max(best)
    return Bandwidth(gbps / 1e9, stream, error)


def _probe_streams(lib: ctypes.CDLL, device: torch.device, a: torch.Tensor, b: torch.Tensor) -> list[tuple[float, str]]:
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    stream = torch.cuda.current_stream(device).cuda_stream
    n4 = a.numel() // 4
    rates = []
    for copy in (0, 1):
        for unroll in _UNROLLS:
            for per_sm in _BLOCKS_PER_SM:
                for threads in _THREADS:
                    def run() -> None:
                        status = lib.stitch_stream(copy, unroll, sms * per_sm, threads, a.data_ptr(), b.data_ptr(), n4, stream)
                        if status != 0:
                            raise RuntimeError(f"stream probe launch failed with cudaError {status}")
                    moved = (2 if copy else 1) * a.numel() * 4
                    rates.append((moved / fastest_of_ten(run),
                                  f"stream_probe {'copy' if copy else 'read'}, unroll {unroll}, {per_sm} blocks/SM x {threads}"))
    return rates


def measure_bandwidth_gbps(device: torch.device, megabytes: int = 512, cache_dir: Optional[str] = None) -> float:
    return measure_bandwidth(device, megabytes, cache_dir).gbps
