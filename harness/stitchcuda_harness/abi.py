"""The Python side of the fast-path C ABI (include/stitch_abi.h). A candidate's thin ModelNew
does `lib = load_library(__stitch_library__)` (the harness injects the path of the library it
built) and calls `lib.forward(*tensors)` once per forward: one ctypes call that passes raw device
pointers and the current stream. The KernelBench export replaces this object with a load_inline
module that has the same `forward`, so the ModelNew source is shared verbatim."""
from __future__ import annotations

import ctypes
from typing import Any

import torch

from .errors import STICKY_CUDA_ERROR_CODES

MAX_DIMS = 8
DTYPE_CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.float64: 3,
               torch.int32: 4, torch.int64: 5, torch.uint8: 6, torch.bool: 7}


class StitchTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("sizes", ctypes.c_int64 * MAX_DIMS), ("strides", ctypes.c_int64 * MAX_DIMS)]


# A library launcher's failure also names its step of the plan: 100000 x (step + 1) + its status.
STEP_STATUS = 100000


def status_name(code: int) -> str:
    """What a stitch_forward status means: a cudaError_t, or (from the built-in coder's library
    launchers) 10000 + a cublasStatus_t or 20000 + a cudnnStatus_t, plus STEP_STATUS x (step + 1)
    for the plan step whose call failed; the library's own message is on the worker's stderr."""
    if code >= STEP_STATUS:
        return f"step k{code // STEP_STATUS - 1}: {status_name(code % STEP_STATUS)}"
    if code >= 20000:
        return f"cuDNN status {code - 20000}"
    if code >= 10000:
        return f"cuBLASLt status {code - 10000}"
    return STICKY_CUDA_ERROR_CODES.get(code, f"cudaError {code}")


class StitchKernelError(RuntimeError):
    """A non-zero status from stitch_forward; `cuda_error_code` is the cudaError_t value."""

    def __init__(self, code: int) -> None:
        super().__init__(f"stitch_forward returned {code} ({status_name(code)})")
        self.cuda_error_code = code


def _fill(slot: StitchTensor, t: torch.Tensor) -> None:
    n = t.dim()
    if n > MAX_DIMS:
        raise ValueError(f"tensor has {n} dims; the ABI carries at most {MAX_DIMS}")
    slot.data = t.data_ptr()
    slot.dtype = DTYPE_CODES[t.dtype]
    slot.ndim = n
    slot.sizes[:n] = t.shape
    slot.strides[:n] = t.stride()


# Descriptor arrays kept per call signature (dtypes, shapes, strides): a forward then only
# rewrites the data pointers, a third of the host time of filling every slot anew, which shows
# in the timing of kernels that run for tens of microseconds.
_SIGNATURES_KEPT = 16


def _public_current_stream(device: int) -> int:
    return torch.cuda.current_stream(device).cuda_stream


# The current stream's raw handle, as Inductor's generated code reads it: 0.2 µs against 7 µs for
# torch.cuda.current_stream(), which builds a Stream object per call (measured on the H100
# machine; bench/results/kernel_patterns_2026-11-23_h100.md). The public call is the fallback.
_current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", _public_current_stream)


class StitchLibrary:
    """`forward(*tensors)` calls stitch_forward; `segment(i, *tensors)` calls a partial candidate's
    stitch_segment. A library may export either or both."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lib = ctypes.CDLL(path)
        self._forward = getattr(self._lib, "stitch_forward", None)
        self._segment = getattr(self._lib, "stitch_segment", None)
        if self._forward is None and self._segment is None:
            raise AttributeError(f"{path} exports neither stitch_forward nor stitch_segment")
        if self._forward is not None:
            self._forward.argtypes = [ctypes.POINTER(StitchTensor), ctypes.c_int32, ctypes.c_void_p]
            self._forward.restype = ctypes.c_int
        if self._segment is not None:
            self._segment.argtypes = [ctypes.c_int32, ctypes.POINTER(StitchTensor), ctypes.c_int32, ctypes.c_void_p]
            self._segment.restype = ctypes.c_int
        self._descriptors: dict[tuple, Any] = {}

    def forward(self, *tensors: torch.Tensor) -> None:
        if self._forward is None:
            raise AttributeError(f"{self.path} has no stitch_forward (a partial candidate: call segment())")
        self._call(None, tensors)

    def segment(self, index: int, *tensors: torch.Tensor) -> None:
        if self._segment is None:
            raise AttributeError(f"{self.path} has no stitch_segment")
        self._call(index, tensors)

    def _call(self, segment: Any, tensors: tuple) -> None:
        key = (segment, *[(t.dtype, t.shape, t.stride()) for t in tensors])
        args = self._descriptors.get(key)
        if args is None:
            args = (StitchTensor * len(tensors))()
            for slot, t in zip(args, tensors):
                _fill(slot, t)
            if len(self._descriptors) >= _SIGNATURES_KEPT:
                self._descriptors.clear()
            self._descriptors[key] = args
        else:
            for slot, t in zip(args, tensors):
                slot.data = t.data_ptr()
        stream = _current_stream(tensors[0].get_device()) if tensors and tensors[0].is_cuda else None
        status = (self._forward(args, len(tensors), stream) if segment is None
                  else self._segment(segment, args, len(tensors), stream))
        if status != 0:
            raise StitchKernelError(status)


def load_library(library: Any) -> Any:
    """A path → StitchLibrary; an object that already has `forward` (the export's shim) as is."""
    return library if hasattr(library, "forward") else StitchLibrary(str(library))
