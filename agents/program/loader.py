"""Loads the StitchCUDA programs in this folder (written by StitchCUDA next to your model).

Each `.cu` here is a program StitchCUDA generated for one model's forward; the comment above its call
in that forward says whether it was verified, on which GPU, and its measured speedup. It needs
only PyTorch and the CUDA toolkit: on first use the `.cu` is built with nvcc for the architecture of
the GPU it runs on, into your cache folder ($STITCHCUDA_CACHE, else $XDG_CACHE_HOME/stitchcuda or
~/.cache/stitchcuda, under programs/), and reused while its text, the architecture and the nvcc stay
the same. nvcc is $STITCHCUDA_NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH, else
/usr/local/cuda/bin/nvcc.

The model's forward asks `program.route(x=x, ...)` first: "program" where the tensors are those the
program was generated for, or, for a program that takes the rows of each call (`any_rows`: its kernels
compute their sizes from the rows given), where they differ from those only in the batch size (dim 0 of
every input, each the same multiple of the rows); "chunks" where only the batch size differs and the
program, generated for B rows each computed from itself alone, serves it in chunks of B rows (`in_chunks`: the last chunk
padded with copies of a row, whose results are dropped) faster than the original would: the chunks' rows
under the rows given times the program's measured speedup over eager (or, not timed, less than a quarter
of them padding), warned once; "original" for any other shape, and for inputs that are not on a CUDA
GPU (CPU tensors, a machine without CUDA), warned once (the forward then runs its original PyTorch
code). Another dtype or memory layout is an error that says what to change.
To build ahead of time (a Docker image, a machine without a GPU):
`python -c "import stitchcuda_kernels as k; k.build('model.cu', arch='sm_90')"`.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import warnings
from typing import Any, Optional

import torch

__all__ = ["load_program", "build", "Program", "StitchProgramError", "NeedsGpuError", "BuildError",
           "TensorMismatchError", "KernelError"]

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_DIMS = 8  # the C ABI's StitchTensor carries at most this many dims
_DTYPE_CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.float64: 3,
                torch.int32: 4, torch.int64: 5, torch.uint8: 6, torch.bool: 7}
# Libraries a program links when it includes their headers (cuBLASLt and cuDNN carry GEMMs and
# convolutions); cuDNN may come as the pip wheel PyTorch itself loads rather than with the toolkit.
_LIBRARIES = {"cublasLt.h": ("cublasLt", "nvidia.cublas"), "cublas_v2.h": ("cublas", "nvidia.cublas"),
              "cudnn.h": ("cudnn", "nvidia.cudnn")}


class StitchProgramError(RuntimeError):
    """A StitchCUDA program could not run; the message says why and what to do."""


class NeedsGpuError(StitchProgramError):
    """The program runs CUDA kernels: it needs CUDA tensors on a machine with a GPU."""


class BuildError(StitchProgramError):
    """nvcc could not be found or could not build the program."""


class KernelError(StitchProgramError):
    """The program returned a CUDA (or cuBLASLt / cuDNN) error status."""


class TensorMismatchError(ValueError):
    """A tensor's dtype, device or memory layout is not the one the program was generated for."""


def find_nvcc() -> Optional[str]:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    for path in (os.environ.get("STITCHCUDA_NVCC"), home and os.path.join(home, "bin", "nvcc"),
                 shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if path and os.path.isfile(path):
            return path
    return None


def gpu_arch(device: Optional[torch.device] = None) -> str:
    """The nvcc architecture of a GPU (sm_90a on an H100: the arch-specific form, as it is only
    ever run there)."""
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}" + ("a" if major >= 9 else "")


def cache_dir() -> str:
    root = os.environ.get("STITCHCUDA_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "stitchcuda")
    return os.path.join(root, "programs")


def _library_flags(text: str, nvcc: str) -> list[str]:
    import importlib.util

    toolkit = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    flags: list[str] = []
    for header, (lib, wheel) in _LIBRARIES.items():
        if f"<{header}>" not in text and f'"{header}"' not in text:
            continue
        if not os.path.isfile(os.path.join(toolkit, "include", header)):
            try:
                spec = importlib.util.find_spec(wheel)
            except ModuleNotFoundError:
                spec = None
            for root in (spec.submodule_search_locations or []) if spec else []:
                if os.path.isfile(os.path.join(root, "include", header)):
                    libdir = os.path.join(root, "lib")
                    flags += ["-I", os.path.join(root, "include"), "-L", libdir, "-Xlinker", f"-rpath={libdir}"]
                    break
        flags.append(f"-l{lib}")
    return flags


def _source_path(name: str) -> str:
    path = name if os.path.isabs(name) else os.path.join(HERE, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"StitchCUDA program {name} is not in {HERE}: accept the candidate again or "
                                "run `stitchcuda optimize --out DIR` to write it")
    return path


_build_lock = threading.Lock()


def build(name: str, arch: Optional[str] = None, cache: Optional[str] = None) -> str:
    """Builds the program `name` (a .cu in this folder) for `arch` (default: the current GPU's)
    and returns the shared library's path; a build already in the cache is reused."""
    source = _source_path(name)
    if arch is None:
        if not torch.cuda.is_available():
            raise NeedsGpuError(f"building {name} for this machine's GPU: no CUDA GPU is visible "
                                "(torch.cuda.is_available() is False); pass arch='sm_90' (say) to build for another")
        arch = gpu_arch()
    nvcc = find_nvcc()
    if nvcc is None:
        raise BuildError(f"building {name}: nvcc not found; install the CUDA toolkit or set CUDA_HOME or STITCHCUDA_NVCC")
    with open(source, encoding="utf-8") as f:
        text = f.read()
    flags = _library_flags(text, nvcc)
    key = hashlib.sha256("\0".join([text, arch, os.path.realpath(nvcc), *flags]).encode()).hexdigest()[:16]
    stem = os.path.splitext(os.path.basename(source))[0]
    folder = os.path.join(cache or cache_dir(), f"{stem}-{arch}-{key}")
    library = os.path.join(folder, f"lib{stem}.so")
    with _build_lock:
        if os.path.isfile(library):
            return library
        os.makedirs(folder, exist_ok=True)
        # Built under a temporary name and renamed: another process building the same program
        # at the same time never loads a half-written library.
        fd, partial = tempfile.mkstemp(suffix=".so", dir=folder)
        os.close(fd)
        command = [nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", f"-arch={arch}", "-o", partial,
                   source, *flags]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            os.unlink(partial)
            log = (done.stderr or done.stdout).strip().splitlines()
            raise BuildError(f"nvcc could not build {source} for {arch} (exit {done.returncode}):\n" +
                             "\n".join(log[:20]) + f"\ncommand: {' '.join(command)}")
        os.replace(partial, library)
    return library


def _public_current_stream(device: int) -> int:
    return torch.cuda.current_stream(device).cuda_stream


# The current stream's raw handle as PyTorch's own generated code reads it (a fraction of a
# microsecond, where torch.cuda.current_stream() builds a Stream object per call); the public
# call where this PyTorch lacks it.
_current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", _public_current_stream)


class _Tensor(ctypes.Structure):  # StitchTensor of the C ABI
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("sizes", ctypes.c_int64 * MAX_DIMS), ("strides", ctypes.c_int64 * MAX_DIMS)]


def _status_text(code: int) -> str:
    """A program's status: a cudaError_t, or 10000 + a cublasStatus_t, or 20000 + a cudnnStatus_t,
    plus 100000 x (step + 1) for the step of the program whose library call failed."""
    if code >= 100000:
        return f"step k{code // 100000 - 1}: {_status_text(code % 100000)}"
    if code >= 20000:
        return f"cuDNN status {code - 20000}"
    if code >= 10000:
        return f"cuBLASLt status {code - 10000}"
    if code == 1:
        return ("cudaErrorInvalidValue: the tensors' dtypes, shapes or strides are not those the program was "
                "generated for (were the model's parameters changed, e.g. by .half() or .to(memory_format=...)?)")
    return f"cudaError {code}"


class Program:
    """One generated program: `accepts(**inputs)` before running it, then `forward(*tensors)` (a
    whole-forward program) or `segment(i, *tensors)` (a program with operators left in PyTorch
    between its compiled segments). The library is built and loaded on the first call."""

    def __init__(self, name: str, inputs: Optional[dict[str, tuple]] = None, batch: Optional[int] = None,
                 speedup: Optional[float] = None, any_rows: bool = False) -> None:
        self.name = name
        self.source = _source_path(name)
        # name -> (dtype name, shape, strides) as captured when the program was generated
        self.inputs = {k: (str(v[0]), tuple(v[1]), tuple(v[2])) for k, v in (inputs or {}).items()}
        # The rows (dim 0 of every input and output) it was generated for, where each row is computed
        # from itself alone: then it serves any batch size in chunks of that many rows.
        self.batch = batch
        self.speedup = speedup  # over eager PyTorch at the generated shape, as the verifier timed it
        # The program takes any number of rows (a multiple of `batch`'s per input): no chunks needed.
        self.any_rows = any_rows and bool(batch)
        self._lib: Any = None
        self._entry: dict[Any, Any] = {}
        self._descriptors: dict[tuple, Any] = {}
        self._warned: set[str] = set()

    def route(self, **tensors: torch.Tensor) -> str:
        """"program", "chunks" or "original" for these forward inputs (see the module's doc)."""
        given = {arg: t for arg, t in tensors.items() if arg in self.inputs and isinstance(t, torch.Tensor)}
        # Off the GPU (CPU tensors, a machine without CUDA: the user's CPU tests and CI) the model keeps
        # working as it did before the program was kept.
        off = next((arg for arg, t in given.items() if not t.is_cuda), None)
        if off is not None:
            why = "" if torch.cuda.is_available() else " and no CUDA GPU is visible here"
            self._warn_once("device", f"StitchCUDA program {self.name} runs CUDA kernels; {off} is on "
                                      f"{given[off].device}{why}: running the original PyTorch forward for such "
                                      "inputs (warned once)")
            return "original"
        return self.decide(**tensors)

    def decide(self, **tensors: torch.Tensor) -> str:
        """route's answer for inputs on a CUDA GPU, whatever device these are on: shapes, dtypes and
        layouts decide it."""
        given = {arg: t for arg, t in tensors.items() if arg in self.inputs and isinstance(t, torch.Tensor)}
        # Shape first: inputs of another shape run the original forward, on any device.
        other = {arg: tuple(t.shape) for arg, t in given.items() if tuple(t.shape) != self.inputs[arg][1]}
        if not other:
            for arg, t in given.items():
                self._check(arg, t)
            return "program"
        if self.any_rows and self._rows(given) is not None:
            for arg, t in given.items():
                self._check(arg, t)
            return "program"
        rows = {t.shape[0] if t.dim() == len(self.inputs[arg][1]) >= 1 and t.shape[1:] == self.inputs[arg][1][1:]
                else None for arg, t in given.items()}
        if self.batch and len(rows) == 1 and None not in rows:
            n = next(iter(rows))
            chunks = -(-n // self.batch)
            if n > 0 and self._chunks_win(n, chunks):
                for arg, t in given.items():
                    self._check(arg, t)
                self._warn_once("chunks", f"StitchCUDA program {self.name} was generated for {self.batch} rows, got "
                                          f"{n}: running it in {chunks} chunk(s) of {self.batch} rows (warned once)")
                return "chunks"
        arg, shape = next(iter(other.items()))
        self._warn_once("original", f"StitchCUDA program {self.name} was generated for {arg} of shape "
                                    f"{self.inputs[arg][1]}, got {shape}: running the original PyTorch forward for "
                                    "such inputs (warned once)")
        return "original"

    def _rows(self, given: dict[str, torch.Tensor]) -> Optional[int]:
        """The rows of a call whose inputs differ from the generated ones only in dim 0, each input's
        dim 0 its generated size per row times the rows; None where they do not."""
        rows = set()
        for arg, t in given.items():
            shape = self.inputs[arg][1]
            if t.dim() != len(shape) or t.dim() == 0 or t.shape[1:] != shape[1:] or shape[0] % self.batch:
                return None
            per = shape[0] // self.batch
            if per == 0 or t.shape[0] % per:
                return None
            rows.add(t.shape[0] // per)
        return rows.pop() if len(rows) == 1 and min(rows) > 0 else None

    def _chunks_win(self, rows: int, chunks: int) -> bool:
        """Each chunk costs the whole program, padding rows included; the original forward costs about
        `rows / batch` of eager's time at the generated shape, the program 1 / speedup of it. Not timed:
        up to a quarter of padding (bench/results/accepted_program_2026-11-25b_h100: a third padding
        cost a GEMM chain near eager 1.33x the original's time, LeNet5 at 2.07x gained 1.5x)."""
        if self.speedup:
            return chunks * self.batch < rows * self.speedup
        return 4 * (chunks * self.batch - rows) < chunks * self.batch

    def accepts(self, **tensors: torch.Tensor) -> bool:
        """Whether the tensors are those the program was generated for (the forward of a model
        accepted before `route` existed asks this)."""
        return self.route(**tensors) == "program"

    def in_chunks(self, compiled: Any, **args: Any) -> Any:
        """`compiled(**args)` (the forward's compiled path, for `batch` rows) over every `batch` rows of
        the inputs, its outputs written into tensors of the whole batch."""
        rows = next(t.shape[0] for arg, t in args.items() if arg in self.inputs and isinstance(t, torch.Tensor))
        results: list[torch.Tensor] = []
        out: Any = None
        for start in range(0, rows, self.batch):
            take = min(self.batch, rows - start)
            chunk = {arg: self._chunk(arg, t, start, take) if arg in self.inputs and isinstance(t, torch.Tensor) else t
                     for arg, t in args.items()}
            out = compiled(**chunk)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            if not results:
                results = [torch.empty((rows, *o.shape[1:]), dtype=o.dtype, device=o.device) for o in outs]
            for whole, o in zip(results, outs):
                whole[start:start + take].copy_(o[:take])
        return type(out)(results) if isinstance(out, (tuple, list)) else results[0]

    def _chunk(self, arg: str, t: torch.Tensor, start: int, take: int) -> torch.Tensor:
        piece = t[start:start + take]
        if take == self.batch:
            return piece
        _, shape, strides = self.inputs[arg]
        full = torch.empty_strided(shape, strides, dtype=t.dtype, device=t.device)
        full[:take].copy_(piece)
        full[take:].copy_(piece[:1].expand(self.batch - take, *piece.shape[1:]))  # padding rows: copies of a real one
        return full

    def _check(self, arg: str, t: torch.Tensor) -> None:
        dtype, shape, strides = self.inputs[arg]
        if str(t.dtype).replace("torch.", "") != dtype:
            raise TensorMismatchError(f"StitchCUDA program {self.name}: {arg} is {t.dtype}, the program was "
                                      f"generated for torch.{dtype}; pass {arg}.to(torch.{dtype})")
        if any(n != 1 and a != b for n, a, b in zip(t.shape, t.stride(), strides)):
            raise TensorMismatchError(f"StitchCUDA program {self.name}: {arg} has strides {tuple(t.stride())}, the "
                                      f"program reads it with strides {strides}; pass {arg}.contiguous()")

    def _warn_once(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            warnings.warn(message, stacklevel=3)

    def forward(self, *tensors: torch.Tensor) -> None:
        self._call(None, tensors)

    def segment(self, index: int, *tensors: torch.Tensor) -> None:
        self._call(index, tensors)

    def _check_device(self, arg: str, t: torch.Tensor) -> None:
        if t.is_cuda:
            return
        why = ("no CUDA GPU is visible here (torch.cuda.is_available() is False)" if not torch.cuda.is_available()
               else "move the model and its inputs to the GPU (model.cuda(), x.cuda())")
        raise NeedsGpuError(f"StitchCUDA program {self.name} runs CUDA kernels and needs CUDA tensors; {arg} is "
                            f"on {t.device}: {why}")

    def _function(self, segment: Any, device: torch.device) -> Any:
        fn = self._entry.get(segment is None)
        if fn is not None:
            return fn
        if self._lib is None:
            self._lib = ctypes.CDLL(build(self.name, gpu_arch(device)))
        symbol = "stitch_forward" if segment is None else "stitch_segment"
        fn = getattr(self._lib, symbol, None)
        if fn is None:
            raise StitchProgramError(f"StitchCUDA program {self.name} exports no {symbol}")
        fn.argtypes = ([] if segment is None else [ctypes.c_int32]) + [ctypes.POINTER(_Tensor), ctypes.c_int32,
                                                                         ctypes.c_void_p]
        fn.restype = ctypes.c_int
        self._entry[segment is None] = fn
        return fn

    def _call(self, segment: Any, tensors: tuple) -> None:
        for i, t in enumerate(tensors):
            self._check_device(f"tensor {i}", t)
        device = tensors[0].device if tensors else torch.device("cuda")
        fn = self._function(segment, device)
        # Descriptors are kept per call signature: a forward then only rewrites the data pointers.
        key = (segment, *[(t.dtype, t.shape, t.stride()) for t in tensors])
        args = self._descriptors.get(key)
        if args is None:
            args = (_Tensor * len(tensors))()
            for slot, t in zip(args, tensors):
                if t.dim() > MAX_DIMS or t.dtype not in _DTYPE_CODES:
                    raise TensorMismatchError(f"StitchCUDA program {self.name}: a {t.dim()}-dim {t.dtype} tensor "
                                              "cannot be passed to it")
                slot.dtype, slot.ndim = _DTYPE_CODES[t.dtype], t.dim()
                slot.sizes[:t.dim()] = t.shape
                slot.strides[:t.dim()] = t.stride()
            if len(self._descriptors) >= 16:
                self._descriptors.clear()
            self._descriptors[key] = args
        for slot, t in zip(args, tensors):
            slot.data = t.data_ptr()
        stream = _current_stream(device.index if device.index is not None else torch.cuda.current_device())
        status = fn(args, len(tensors), stream) if segment is None else fn(segment, args, len(tensors), stream)
        if status != 0:
            where = "" if segment is None else f" (segment {segment})"
            raise KernelError(f"StitchCUDA program {self.name}{where} returned {status}: {_status_text(status)}")


_programs: dict[tuple, Program] = {}


def load_program(name: str, inputs: Optional[dict[str, tuple]] = None, batch: Optional[int] = None,
                 speedup: Optional[float] = None, any_rows: bool = False) -> Program:
    """The program `name` (a .cu in this folder), checking the forward's inputs against `inputs`
    ({argument: (dtype name, shape, strides)}); `batch`: the rows it was generated for, and serves
    other batch sizes in chunks of; `speedup`: its measured speedup over eager; `any_rows`: it takes
    any number of rows itself. Nothing is built until it first runs."""
    key = (name, repr(sorted((inputs or {}).items())), batch, speedup, any_rows)
    program = _programs.get(key)
    if program is None:
        program = _programs[key] = Program(name, inputs, batch, speedup, any_rows)
    return program
