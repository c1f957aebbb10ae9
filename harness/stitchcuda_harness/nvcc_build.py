"""Fast-path candidate builds (design §6): nvcc compiles a `.cu` with a plain C ABI and no
PyTorch headers into a shared library, cached by content hash; several builds run in parallel;
compiler messages are parsed into diagnostics that point at the candidate's file and line."""
from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

from .build_split import Split, split_units

INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
# Where builds are cached when a call names no cacheDir.
DEFAULT_CACHE_DIR = os.path.join(os.path.expanduser("~"), ".cache", "stitchcuda")

# nvcc front end: "file(12): error: ..."; host compiler: "file:12:5: error: ..."
_NVCC_DIAG = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\): (?P<sev>error|warning|remark)[^:]*: (?P<msg>.*)$")
_GCC_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>error|warning|fatal error): (?P<msg>.*)$")
_TOOL_DIAG = re.compile(r"^(?P<tool>ptxas|nvlink|ld|/usr/bin/ld)[^:]*:?\s*(?P<sev>error|fatal|warning)?\s*:?\s*(?P<msg>.*)$")
# Libraries linked when the candidate includes their headers: cuBLASLt and cuDNN carry the heavy math.
_LIBRARIES = {"cublasLt.h": "cublasLt", "cublas_v2.h": "cublas", "cudnn.h": "cudnn"}


@dataclass
class Diagnostic:
    severity: str
    message: str
    file: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    in_candidate: bool = False


@dataclass
class BuildResult:
    source: str
    ok: bool
    library: Optional[str]
    cached: bool
    seconds: float
    content_hash: str
    command: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    log: str = ""
    units: int = 1  # translation units compiled side by side (build_split.py)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def first_error(self) -> Optional[Diagnostic]:
        """The compiler's first error, what a failed build is reported by."""
        return next((d for d in self.diagnostics if d.severity == "error"), None)

    def failure_text(self) -> str:
        """A failed build in one line: the compiler's first error, else the end of its log."""
        first = self.first_error()
        return first.message if first else self.log[-300:]


def find_nvcc() -> Optional[str]:
    for candidate in (shutil.which("nvcc"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def default_arch() -> str:
    """The visible GPU's architecture, or sm_90 where there is none (CI compiles for Hopper)."""
    try:
        import torch
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"sm_{major}{minor}" + ("a" if major >= 9 else "")
    except ImportError:
        pass
    return "sm_90"


def library_flags(text: str, nvcc: Optional[str]) -> list[str]:
    """-I/-L/-l for the libraries whose headers the source includes."""
    used = [header for header in _LIBRARIES if f"<{header}>" in text or f'"{header}"' in text]
    return [flag for header in used for flag in _library_paths(header, nvcc)] + [f"-l{_LIBRARIES[h]}" for h in used]


def _library_paths(header: str, nvcc: Optional[str]) -> list[str]:
    """-I/-L for a library whose header is not in the toolkit's include folder: cuDNN often comes
    as a pip wheel (nvidia-cudnn-*, the one PyTorch loads) rather than with the toolkit."""
    toolkit = os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else "/usr/local/cuda"
    if os.path.isfile(os.path.join(toolkit, "include", header)):
        return []
    package = {"cudnn.h": "nvidia.cudnn", "cublasLt.h": "nvidia.cublas", "cublas_v2.h": "nvidia.cublas"}.get(header)
    try:
        spec = importlib.util.find_spec(package) if package else None
    except ModuleNotFoundError:
        spec = None
    for root in (spec.submodule_search_locations or []) if spec else []:
        if os.path.isfile(os.path.join(root, "include", header)):
            lib = os.path.join(root, "lib")
            return ["-I", os.path.join(root, "include"), "-L", lib, "-Xlinker", f"-rpath={lib}"]
    return []


def _nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1] if out.stdout else "unknown"


def parse_diagnostics(log: str, source: str) -> list[Diagnostic]:
    real_source = os.path.realpath(source)
    diags: list[Diagnostic] = []
    for raw in log.splitlines():
        line = raw.strip()
        m = _NVCC_DIAG.match(line) or _GCC_DIAG.match(line)
        if m:
            file = m.group("file")
            col = m.groupdict().get("col")
            diags.append(Diagnostic(m.group("sev").replace("fatal error", "error"), m.group("msg"), file,
                                    int(m.group("line")), int(col) if col else None,
                                    os.path.realpath(file) == real_source))
            continue
        t = _TOOL_DIAG.match(line)
        if t and (t.group("sev") or "error" in line.lower() or "undefined reference" in line):
            diags.append(Diagnostic("warning" if t.group("sev") == "warning" else "error", line, None, None, None, False))
    return diags


def arch_flags(arch: str) -> list[str]:
    """Machine code for this one architecture and nothing else. `-arch=sm_90a` also runs the device
    front end a second time for compute_90 PTX (JIT code for other GPUs), which the library, built
    for the GPU it runs on, never uses: a third more compile time for a large candidate."""
    number = arch.split("_", 1)[-1]
    return ["-gencode", f"arch=compute_{number},code=sm_{number}"]


# Builds started in this worker and not yet collected, by output path (see Builder.start).
_RUNNING: dict[str, "PendingBuild"] = {}
_RUNNING_LOCK = threading.Lock()


class PendingBuild:
    """One build running on a thread of its own: `result()` waits for it. The thread reads nvcc's
    output as it comes (a build nobody waits on yet never blocks on a full pipe), and `seconds` is
    the build's own time even when the result is collected long after it ended."""

    def __init__(self, work: Optional[Callable[[], BuildResult]] = None, output: str = "") -> None:
        self._result: Optional[BuildResult] = None
        self._thread: Optional[threading.Thread] = None
        if work is not None:
            self._thread = threading.Thread(target=self._run, args=(work, output), daemon=True)
            self._thread.start()

    @classmethod
    def done(cls, result: BuildResult) -> "PendingBuild":
        p = cls()
        p._result = result
        return p

    def result(self) -> BuildResult:
        if self._thread is not None:
            self._thread.join()
        assert self._result is not None
        return self._result

    def _run(self, work: Callable[[], BuildResult], output: str) -> None:
        try:
            self._result = work()
        except Exception as exc:  # the build's failure, reported as one: the thread must not die silently
            self._result = BuildResult("", False, None, False, 0.0, "", [],
                                       [Diagnostic("error", f"the build could not run: {type(exc).__name__}: {exc}")], "")
        finally:
            with _RUNNING_LOCK:
                if _RUNNING.get(output) is self:
                    del _RUNNING[output]


def _run(cmd: list[str]) -> tuple[int, str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class Builder:
    def __init__(self, cache_dir: str, arch: Optional[str] = None, extra_flags: Optional[list[str]] = None) -> None:
        nvcc = find_nvcc()
        self.nvcc = nvcc
        self.cache_dir = os.path.join(cache_dir, "builds")
        self.arch = arch or default_arch()
        self.extra_flags = list(extra_flags or [])
        self._identity = _nvcc_version(nvcc) if nvcc else "no-nvcc"

    def content_hash(self, source: str) -> str:
        h = hashlib.sha256()
        # The command's flags too: a library built by another recipe is not this one.
        for part in (self._identity, self.arch, " ".join(self.command("", "", ""))):
            h.update(part.encode() + b"\0")
        # The source, its sibling headers and our ABI header: what the output depends on.
        siblings = sorted(glob.glob(os.path.join(os.path.dirname(source), "*.h")) +
                          glob.glob(os.path.join(os.path.dirname(source), "*.cuh")) +
                          glob.glob(os.path.join(INCLUDE_DIR, "*.h")))
        for path in [source] + siblings:
            with open(path, "rb") as f:
                h.update(os.path.basename(path).encode() + b"\0" + f.read())
        return h.hexdigest()[:32]

    def command(self, source: str, output: str, text: str) -> list[str]:
        return [self.nvcc or "nvcc", "-O3", "-std=c++17", "-lineinfo", "-shared", "-Xcompiler", "-fPIC",
                *arch_flags(self.arch), "-I", INCLUDE_DIR, *self.extra_flags, "-o", output, source,
                *library_flags(text, self.nvcc)]

    def build(self, source: str) -> BuildResult:
        return self.start(source).result()

    def start(self, source: str) -> PendingBuild:
        """Starts the build of `source` and returns at once; `result()` waits for it. A build of the
        same content already running in this process is joined, not started again: the loop starts
        the first candidate's build before it times the reference, and the verifier collects it."""
        source = os.path.abspath(source)
        t0 = time.perf_counter()
        if not os.path.isfile(source):
            return PendingBuild.done(BuildResult(source, False, None, False, 0.0, "", [],
                                                 [Diagnostic("error", f"no such file: {source}", source)], ""))
        if self.nvcc is None:
            return PendingBuild.done(BuildResult(source, False, None, False, 0.0, "", [],
                                                 [Diagnostic("error", "nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)")], ""))
        digest = self.content_hash(source)
        output = os.path.join(self.cache_dir, digest, "libcandidate.so")
        with _RUNNING_LOCK:
            running = _RUNNING.get(output)
            if running is not None:
                return running
            if os.path.isfile(output):
                return PendingBuild.done(BuildResult(source, True, output, True, time.perf_counter() - t0, digest))
            os.makedirs(os.path.dirname(output), exist_ok=True)
            pending = PendingBuild(lambda: self._compile(source, digest, output, t0), output)
            _RUNNING[output] = pending
            return pending

    def _compile(self, source: str, digest: str, output: str, t0: float) -> BuildResult:
        with open(source, encoding="utf-8", errors="replace") as f:
            text = f.read()
        tmp = f"{output}.{os.getpid()}.{threading.get_ident()}.tmp"
        split = split_units(text, source, max(1, _cores() - 1))
        units = 1
        if split is not None:
            status, log, cmd = self._compile_units(source, text, split, tmp)
            units = len(split.parts) + 1
            if status != 0:  # the candidate's own error shows again whole; a split that broke it must not lose it
                whole_status, whole_log, cmd = self._compile_whole(source, text, tmp)
                if whole_status == 0:
                    log = f"built as one unit: the {units} units did not build:\n{log}\n{whole_log}".strip()
                    status, units = 0, 1
                else:
                    status, log, units = whole_status, whole_log, 1
        else:
            status, log, cmd = self._compile_whole(source, text, tmp)
        diags = parse_diagnostics(log, source)
        seconds = time.perf_counter() - t0
        if status != 0:
            if not any(d.severity == "error" for d in diags):
                diags.append(Diagnostic("error", f"nvcc exited with status {status}"))
            return BuildResult(source, False, None, False, seconds, digest, cmd, diags, log, units)
        os.replace(tmp, output)  # atomic: parallel builds of one hash never see half a library
        return BuildResult(source, True, output, False, seconds, digest, cmd, diags, log, units)

    def _compile_whole(self, source: str, text: str, tmp: str) -> tuple[int, str, list[str]]:
        cmd = self.command(source, tmp, text)
        return (*_run(cmd), cmd)

    def _compile_units(self, source: str, text: str, split: Split, tmp: str) -> tuple[int, str, list[str]]:
        """Each unit compiled to an object on its own core, then one link: the kernels' device code
        needs no device link (each kernel is launched from its own unit, through its launcher)."""
        work = f"{tmp}.units"
        os.makedirs(work, exist_ok=True)
        try:
            compile_base = [self.nvcc or "nvcc", "-O3", "-std=c++17", "-lineinfo", "-c", "-Xcompiler", "-fPIC",
                            *arch_flags(self.arch), "-I", INCLUDE_DIR, "-I", os.path.dirname(source), *self.extra_flags]
            jobs = []
            for i, unit in enumerate([split.main] + split.parts):
                path = os.path.join(work, f"unit{i}.cu")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(unit)
                jobs.append(compile_base + ["-o", path[:-3] + ".o", path])
            with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
                compiled = list(pool.map(_run, jobs))
            log = "\n".join(out for _, out in compiled if out)
            failed = next((status for status, _ in compiled if status != 0), 0)
            if failed:
                return failed, log, jobs[0]
            link = [self.nvcc or "nvcc", "-shared", *arch_flags(self.arch), "-o", tmp,
                    *[j[-2] for j in jobs], *library_flags(text, self.nvcc)]
            status, out = _run(link)
            return status, "\n".join(x for x in (log, out) if x), link
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def build_many(self, sources: list[str], jobs: Optional[int] = None) -> list[BuildResult]:
        workers = max(1, min(len(sources), jobs or os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(self.build, sources))
