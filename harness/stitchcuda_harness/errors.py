"""Structured failures: every error the worker reports carries a code, a message and, when one is
known, the file and line it comes from (the user's task or candidate, not the harness)."""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from typing import Any, Optional

# cudaError_t values after which the CUDA context is unusable: the process must exit so the host
# restarts it (a fresh context is the only recovery CUDA offers).
STICKY_CUDA_ERROR_CODES = {
    700: "cudaErrorIllegalAddress",
    702: "cudaErrorLaunchTimeout",
    710: "cudaErrorAssert",
    714: "cudaErrorHardwareStackError",
    715: "cudaErrorIllegalInstruction",
    716: "cudaErrorMisalignedAddress",
    717: "cudaErrorInvalidAddressSpace",
    718: "cudaErrorInvalidPc",
    719: "cudaErrorLaunchFailure",
}
_STICKY_MESSAGES = (
    "illegal memory access",
    "unspecified launch failure",
    "misaligned address",
    "illegal instruction",
    "device-side assert",
    "hardware stack error",
    "invalid program counter",
    "the launch timed out",
    "cudaErrorIllegalAddress",
    "cudaErrorLaunchFailure",
)


@dataclass
class HarnessError(Exception):
    """An error reply: `code` is snake_case and stable, `message` is for people."""

    code: str
    message: str
    file: Optional[str] = None
    line: Optional[int] = None
    details: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file else ""
        return f"{where}{self.code}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.file is not None:
            out["file"] = self.file
        if self.line is not None:
            out["line"] = self.line
        if self.details:
            out["details"] = self.details
        return out


def is_sticky_cuda_error(exc: BaseException) -> bool:
    code = getattr(exc, "cuda_error_code", None)
    if isinstance(code, int) and code in STICKY_CUDA_ERROR_CODES:
        return True
    text = str(exc)
    return any(m.lower() in text.lower() for m in _STICKY_MESSAGES)


def is_out_of_memory(exc: BaseException) -> bool:
    return is_cuda_out_of_memory(exc) or is_cpu_out_of_memory(exc)


def is_cuda_out_of_memory(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "CUDA out of memory" in str(exc)


def is_cpu_out_of_memory(exc: BaseException) -> bool:
    """PyTorch's CPU allocator ("DefaultCPUAllocator: can't allocate memory") or Python's own."""
    return isinstance(exc, MemoryError) or "can't allocate memory" in str(exc) or "DefaultCPUAllocator" in str(exc)


# Out-of-memory codes, by the memory that ran out: a fact about the task and the machine, never the candidate's.
OUT_OF_MEMORY_CODES = ("cuda_out_of_memory", "cpu_out_of_memory")


# cudaError_t values and messages that mean this machine has no usable GPU: a fact about where the
# verifier runs, never a fault of the candidate.
NO_GPU_CUDA_ERROR_CODES = {35: "cudaErrorInsufficientDriver", 100: "cudaErrorNoDevice"}
_NO_GPU_MESSAGES = (
    "no CUDA-capable device",
    "CUDA driver version is insufficient",
    "Found no NVIDIA driver",
    "Torch not compiled with CUDA enabled",
    "No CUDA GPUs are available",
    "CUDA_HOME environment variable is not set",
    "No CUDA runtime is found",
)


def is_no_gpu_error(exc: BaseException, building_cuda: bool = False) -> bool:
    """`building_cuda`: the exception came from compiling CUDA sources (load_inline), which fails
    in ways of its own without a GPU: any such failure counts when CUDA is unavailable."""
    import torch
    if building_cuda and not torch.cuda.is_available():
        return True
    code = getattr(exc, "cuda_error_code", None)
    if isinstance(code, int) and code in NO_GPU_CUDA_ERROR_CODES:
        return True
    text = str(exc).lower()
    return any(m.lower() in text for m in _NO_GPU_MESSAGES)


def user_location(exc: BaseException, files: tuple[str, ...]) -> tuple[Optional[str], Optional[int]]:
    """The deepest traceback frame inside one of `files` (the user's own code), else the deepest
    frame outside this package, so an error points where the user can act on it."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    wanted = {os.path.realpath(f) for f in files}
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        if os.path.realpath(frame.filename) in wanted:
            return frame.filename, frame.lineno
    here = os.path.dirname(os.path.realpath(__file__))
    for frame in reversed(frames):
        if not os.path.realpath(frame.filename).startswith(here):
            return frame.filename, frame.lineno
    return None, None


def from_exception(code: str, exc: BaseException, files: tuple[str, ...], what: str) -> HarnessError:
    """Wrap a user-code exception; out of memory and sticky errors get their own codes because the host
    treats them differently (out of memory: a fact about the task, named by the memory that ran out,
    GPU or CPU; sticky: restart the worker)."""
    file, line = user_location(exc, files)
    memory = ""
    if is_sticky_cuda_error(exc):
        code = "cuda_sticky_error"
    elif is_cuda_out_of_memory(exc):
        code = "cuda_out_of_memory"
    elif is_cpu_out_of_memory(exc):
        code, memory = "cpu_out_of_memory", "out of CPU memory: "
    message = f"{what}: {memory}{type(exc).__name__}: {exc}".strip()
    return HarnessError(code, message, file, line)
