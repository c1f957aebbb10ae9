"""The rubric's CUDA-engineering dimension (protocol/SCORE.md): which GPU techniques a candidate
really uses, read from what nvcc made of it (PTX and SASS through cuobjdump) where it can be
compiled, else from its source. Compiled code is the stronger evidence: a `__shared__` array the
compiler removed, or a float4 cast it split into scalar loads, does not count there. A load_inline
candidate's CUDA string is compiled against PyTorch's headers (slow, about 10-30 s, so cached)."""
from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import subprocess
import sysconfig
from dataclasses import dataclass, field
from typing import Any, Optional

from .candidate_files import CandidateFiles
from .nvcc_build import INCLUDE_DIR, find_nvcc, library_flags
from .rubric_metrics import Measured, Profile

# Each technique's share of the dimension. The heavy hitters of the CUDA-optimization literature
# (and of our own measurements: cuBLASLt/cuDNN tensor cores, fusion, 16-byte accesses) weigh most;
# warp shuffles and async copies are refinements on top of them.
FEATURE_WEIGHTS = {
    "shared_memory": 0.15, "tiling": 0.15, "tensor_cores": 0.2, "vectorized_access": 0.15,
    "async_copy": 0.1, "warp_shuffle": 0.05, "fusion": 0.2,
}
# Measured only (an Nsight Compute profile, rubric_metrics.py): a memory-bound candidate moving the
# bytes it must near the DRAM peak. Shared memory and tiling are worth their 0.3 because they cut
# DRAM traffic for data that is reused; a streaming kernel has nothing to reuse, and this is the
# measured form of the same virtue: it counts instead of them (the larger of the two), never on top.
BANDWIDTH_WEIGHT = FEATURE_WEIGHTS["shared_memory"] + FEATURE_WEIGHTS["tiling"]
_REUSE = ("shared_memory", "tiling")

# (feature, where, pattern). PTX instruction names are stable across arches; SASS names are
# Hopper's and Ampere's (HMMA/HGMMA, LDG.E.128, LDGSTS, UTMALDG).
_COMPILED = (
    ("shared_memory", "ptx", r"\b(?:ld|st|cp\.async[\w.]*)\.shared\b|\.shared\s+\.align"),
    ("shared_memory", "sass", r"\b(?:LDS|STS|LDSM)\b"),
    ("barrier", "ptx", r"\bbar(?:rier)?\.sync\b"),
    ("barrier", "sass", r"\bBAR\.SYNC\b"),
    ("global_to_shared", "ptx", r"\bcp\.async\b|\bld\.global[\w.]*\b[^\n]*\n(?:[^\n]*\n){0,6}?[^\n]*\bst\.shared\b"),
    ("tensor_cores", "ptx", r"\b(?:mma\.sync|wgmma\.\w+|wmma\.mma)\b"),
    ("tensor_cores", "sass", r"\b(?:HMMA|HGMMA|IMMA|DMMA)\b"),
    ("vectorized_access", "ptx", r"\b(?:ld|st)\.global(?:\.\w+)*\.v[24]\.(?:f32|b32|u32|s32|f64|b64)\b"),
    ("vectorized_access", "sass", r"\b(?:LDG|STG)\.E(?:\.\w+)*\.(?:64|128)\b"),
    ("async_copy", "ptx", r"\bcp\.async(?:\.bulk)?\b|\bcp\.reduce\.async\.bulk\b"),
    ("async_copy", "sass", r"\b(?:LDGSTS|UTMALDG|UBLKCP)\b"),
    ("warp_shuffle", "ptx", r"\bshfl\.sync\b|\bredux\.sync\b"),
    ("warp_shuffle", "sass", r"\bSHFL\b|\bREDUX\b"),
)
_SOURCE = (
    ("shared_memory", r"__shared__"),
    ("barrier", r"__syncthreads\s*\(|\.sync\s*\(\s*\)|cuda::barrier"),
    ("tensor_cores", r"\bwmma::|\bmma\.sync|wgmma|CUDNN_TENSOR_OP_MATH|CUBLAS_COMPUTE_32F_FAST_TF32|"
                     r"CUBLAS_COMPUTE_32F_FAST_16\w*|CUBLAS_TENSOR_OP_MATH"),
    ("vectorized_access", r"\b(?:float|int|uint|double)[24]\s*\*|reinterpret_cast<\s*const\s+float4|__ldg\(\s*\(const float4"),
    ("async_copy", r"cp\.async|__pipeline_memcpy_async|cuda::memcpy_async|cp_async|cuTensorMap|TMA"),
    ("warp_shuffle", r"__shfl_\w*sync|__reduce_\w+_sync|cooperative_groups::reduce"),
)
# Heavy math handed to the vendor libraries: their kernels are tiled, use tensor cores where the
# precision allows, and fold epilogues (bias, activation) into the GEMM.
_LIBRARY = re.compile(r"\bcublasLtMatmul\b|\bcublas[SG]gemm\w*|\bcudnnConvolutionForward\b|\bcudnnBackendExecute\b|"
                      r"\bcudnnRNNForward\w*\b")
# A cuBLASLt epilogue named in the source: our candidates name one only in the shape of a call that
# applies it. cuDNN's fused bias-activation call is not read from the source: a library prelude
# holds it for the calls where it measures faster, so its presence says nothing; operators per
# compiled step (below) count that fusion.
_EPILOGUE = re.compile(r"CUBLASLT_EPILOGUE_(?!DEFAULT)\w+")
# Tensor-core evidence that names a library call or its math mode (the library's kernels show it)
# rather than the candidate's own MMA instructions.
_LIBRARY_EVIDENCE = re.compile(_LIBRARY.pattern + r"|CUDNN_TENSOR_OP_MATH|CUBLAS_COMPUTE_32F_FAST|CUBLAS_TENSOR_OP_MATH")
_KERNEL = re.compile(r"__global__\s+(?:void|__launch_bounds__)")
_LAUNCH = re.compile(r"<<<")


@dataclass
class Engineering:
    score: float = 0.0
    features: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {present, weight, evidence}
    compiled: dict[str, Any] = field(default_factory=dict)  # {ptx, sass, arch, why} what was read
    kernels: int = 0
    library_calls: int = 0
    metrics: dict[str, Any] = field(default_factory=lambda: {"read": "none (no profile)"})  # the profile read

    def to_json(self) -> dict[str, Any]:
        return {"score": round(self.score, 4), "features": self.features, "compiled": self.compiled,
                "metrics": self.metrics, "kernels": self.kernels, "libraryCalls": self.library_calls}


def embedded_cuda(python_source: str) -> str:
    """The C++/CUDA strings a load_inline candidate embeds (any string constant that defines a
    kernel or includes a CUDA header), joined."""
    try:
        tree = ast.parse(python_source)
    except SyntaxError:
        return ""
    parts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and ("__global__" in n.value or "#include" in n.value)]
    return "\n".join(parts)


def cuda_text(files: CandidateFiles) -> str:
    if files.cuda:
        with open(files.cuda, encoding="utf-8", errors="replace") as f:
            return f.read()
    with open(files.python, encoding="utf-8", errors="replace") as f:
        return embedded_cuda(f.read())


# nvcc on a load_inline source parses all of PyTorch's headers; past this it is not worth waiting for.
COMPILE_TIMEOUT_S = 300


def inline_cuda_file(python_file: str, cache_dir: str) -> Optional[str]:
    """The CUDA a load_inline candidate compiles (its string constants that define a kernel) as a
    `.cu` in the cache, or None when it embeds none."""
    with open(python_file, encoding="utf-8", errors="replace") as f:
        try:
            tree = ast.parse(f.read())
        except SyntaxError:
            return None
    kernels = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and "__global__" in n.value]
    if not kernels:
        return None
    text = "\n".join(kernels)
    path = os.path.join(cache_dir, "rubric", "inline-" + hashlib.sha256(text.encode()).hexdigest()[:24] + ".cu")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.isfile(path):
        with open(f"{path}.{os.getpid()}.tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(f"{path}.{os.getpid()}.tmp", path)
    return path


def torch_include_dirs() -> list[str]:
    """What a load_inline source's `#include <torch/extension.h>` needs: PyTorch's and Python's headers."""
    try:
        from torch.utils.cpp_extension import include_paths
        dirs = list(include_paths(cuda=False))
    except (ImportError, OSError):
        dirs = []
    return dirs + [sysconfig.get_paths()["include"]]


def compile_listings(cu_file: str, cache_dir: str, arch: str, include_dirs: tuple[str, ...] | list[str] = ()) -> dict[str, Any]:
    """PTX and SASS of a `.cu` ({"ptx", "sass"} text, or {"why"} when they cannot be made here),
    cached by content."""
    nvcc = find_nvcc()
    cuobjdump = shutil.which("cuobjdump") or (os.path.join(os.path.dirname(nvcc), "cuobjdump") if nvcc else None)
    if not nvcc:
        return {"why": "nvcc not found"}
    with open(cu_file, "rb") as f:
        text = f.read()
    digest = hashlib.sha256(text + arch.encode()).hexdigest()[:24]
    out_dir = os.path.join(cache_dir, "rubric", digest)
    os.makedirs(out_dir, exist_ok=True)
    ptx, cubin = os.path.join(out_dir, "candidate.ptx"), os.path.join(out_dir, "candidate.cubin")
    flags = ["-O3", "-std=c++17", "-I", INCLUDE_DIR, *[f"-I{d}" for d in include_dirs],
             *[f for f in library_flags(text.decode(errors="replace"), nvcc) if not f.startswith("-l")]]
    result: dict[str, Any] = {"arch": arch}
    have_cuobjdump = bool(cuobjdump and os.path.isfile(cuobjdump))
    for kind, path in (("ptx", ptx), ("cubin", cubin)) if have_cuobjdump else (("ptx", ptx),):
        if os.path.isfile(path):
            continue
        arch_flag = f"-arch={arch.replace('sm_', 'compute_')}" if kind == "ptx" else f"-arch={arch}"
        tmp = f"{path}.{os.getpid()}.tmp"  # parallel scorers of one source never see half a file
        try:
            proc = subprocess.run([nvcc, f"-{kind}", arch_flag, *flags, "-o", tmp, cu_file],
                                  capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {"why": f"nvcc -{kind} took longer than {COMPILE_TIMEOUT_S} s"}
        if proc.returncode != 0:
            return {"why": f"nvcc -{kind} failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]}
        os.replace(tmp, path)
    with open(ptx, encoding="utf-8", errors="replace") as f:
        result["ptx"] = f.read()
    if not have_cuobjdump:
        result["why"] = "no SASS: cuobjdump not found"
        return result
    proc = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True)
    if proc.returncode == 0:
        result["sass"] = proc.stdout
    else:
        result["why"] = "no SASS: cuobjdump failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    return result


def _found(pattern: str, text: str) -> Optional[str]:
    m = re.search(pattern, text)
    return m.group(0).strip().splitlines()[0] if m else None


def measure_engineering(files: CandidateFiles, cache_dir: str, arch: str,
                        covered_operators: Optional[int] = None, profile: Optional[Profile] = None,
                        no_profile: str = "none (no profile)", min_bytes: Optional[float] = None) -> Engineering:
    """The techniques the candidate's code shows; with `profile` (its kernels as ncu measured one
    forward) each is confirmed or contradicted by the kernels that ran, and bandwidth efficiency is
    judged against `min_bytes` (the bytes the task must move, the verdict's timing.roofline.bytes)."""
    source = cuda_text(files)
    if files.cuda:
        listings = compile_listings(files.cuda, cache_dir, arch)
    else:
        inline = inline_cuda_file(files.python, cache_dir)
        listings = compile_listings(inline, cache_dir, arch, torch_include_dirs()) if inline else {"why": "no CUDA kernel in the file"}
    ptx, sass = listings.get("ptx", ""), listings.get("sass", "")
    compiled = bool(ptx)
    seen: dict[str, list[str]] = {}

    def note(feature: str, where: str, text: str) -> None:
        seen.setdefault(feature, []).append(f"{where}: {text}")

    if compiled:
        for feature, where, pattern in _COMPILED:
            hit = _found(pattern, ptx if where == "ptx" else sass)
            if hit:
                note(feature, where, hit)
    else:  # no compiled code to read: the source is all there is
        for feature, pattern in _SOURCE:
            hit = _found(pattern, source)
            if hit:
                note(feature, "source", hit)
    library = len(_LIBRARY.findall(source))
    if library and _found(_SOURCE[2][1], source):  # a library call in tensor-op math
        note("tensor_cores", "source", _found(_LIBRARY.pattern, source) or "")
    kernels = len(_KERNEL.findall(source))

    eng = Engineering(kernels=kernels, library_calls=library,
                      compiled={"read": "ptx+sass" if sass else "ptx" if compiled else "source",
                                **({"why": listings["why"]} if "why" in listings else {}), "arch": arch})
    present = {
        "shared_memory": "shared_memory" in seen,
        # A tile is data staged from global into shared memory and shared among threads after a barrier.
        "tiling": "shared_memory" in seen and "barrier" in seen and ("global_to_shared" in seen or not compiled),
        "tensor_cores": "tensor_cores" in seen,
        "vectorized_access": "vectorized_access" in seen,
        "async_copy": "async_copy" in seen,
        "warp_shuffle": "warp_shuffle" in seen,
    }
    evidence = {k: seen.get(k, []) for k in present}
    evidence["tiling"] = seen.get("barrier", []) + seen.get("global_to_shared", []) if present["tiling"] else []
    # Fusion: operators per compiled step (a kernel or a library call); a library call with a
    # fused epilogue counts as fused whatever the count.
    steps = kernels + library
    per_step = (covered_operators / steps) if covered_operators and steps else None
    epilogue = _found(_EPILOGUE.pattern, source)
    present["fusion"] = bool(epilogue) or (per_step is not None and per_step >= 2)
    evidence["fusion"] = ([f"source: {epilogue}"] if epilogue else []) + (
        [f"{covered_operators} operators in {steps} compiled steps"] if per_step is not None else [])
    measured: dict[str, str] = {}
    bandwidth, bandwidth_evidence = False, ["needs Nsight Compute metrics: " + no_profile]
    if profile is not None:
        m = Measured(profile, source, library)
        eng.metrics = m.summary(min_bytes)
        judges = {"shared_memory": m.shared_memory, "tiling": m.tiling, "async_copy": lambda: m.async_copy(evidence["async_copy"]),
                  "tensor_cores": lambda: m.tensor_cores(evidence["tensor_cores"], _LIBRARY_EVIDENCE)}
        for name in FEATURE_WEIGHTS:
            if name == "fusion" or not present[name]:
                continue  # a profile confirms or contradicts the techniques the code shows, adds none
            state, lines = judges[name]() if name in judges else (
                "not measured: the profile's sections count no vector widths or shuffles", [])
            measured[name] = state
            evidence[name] = evidence[name] + lines
            present[name] = state != "contradicted"
        # Fusion from the launches that ran rather than the kernels the source defines.
        launches = m.launches_for_fusion()
        if covered_operators and launches:
            fused = bool(epilogue) or covered_operators / launches >= 2
            measured["fusion"] = ("confirmed" if fused and present["fusion"] else "contradicted" if present["fusion"]
                                  else "found by measurement" if fused else "not fused")
            evidence["fusion"] = evidence["fusion"] + [f"ncu: {covered_operators} operators in {launches} "
                                                       f"launch{'' if launches == 1 else 'es'} of the candidate's kernels per forward"]
            present["fusion"] = fused
        elif present["fusion"]:
            measured["fusion"] = "not measured: " + ("no kernel of the candidate ran" if covered_operators else "no operator count")
        bandwidth, bandwidth_evidence = m.bandwidth(min_bytes)
    else:
        eng.metrics = {"read": no_profile}
    for name, weight in FEATURE_WEIGHTS.items():
        eng.features[name] = {"present": present[name], "weight": weight, "evidence": evidence[name],
                              **({"measured": measured[name]} if name in measured else {})}
    eng.features["bandwidth_efficiency"] = {"present": bandwidth, "weight": BANDWIDTH_WEIGHT, "evidence": bandwidth_evidence,
                                            "insteadOf": list(_REUSE)}
    reuse = sum(FEATURE_WEIGHTS[n] for n in _REUSE if present[n])
    rest = sum(w for n, w in FEATURE_WEIGHTS.items() if present[n] and n not in _REUSE)
    eng.score = min(1.0, rest + max(reuse, BANDWIDTH_WEIGHT if bandwidth else 0.0))
    return eng
