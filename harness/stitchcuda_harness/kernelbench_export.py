"""KernelBench export (design §6): the fast-path candidate written as one file — the .cu and the
ABI header inlined, a small torch-facing wrapper, `load_inline`, and the candidate's own ModelNew
source — so anyone's KernelBench evaluation can check it. `check_export` runs both forms on the
same inputs and reports whether they agree."""
from __future__ import annotations

import hashlib
import os
import re
from typing import Any

import torch

from .candidate_files import resolve_candidate
from .errors import HarnessError
from .nvcc_build import DEFAULT_CACHE_DIR, INCLUDE_DIR, find_nvcc, library_flags

_WRAPPER = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <vector>

static int32_t stitch_dtype_code(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return STITCH_F32; case at::kHalf: return STITCH_F16; case at::kBFloat16: return STITCH_BF16;
    case at::kDouble: return STITCH_F64; case at::kInt: return STITCH_I32; case at::kLong: return STITCH_I64;
    case at::kByte: return STITCH_U8; case at::kBool: return STITCH_BOOL; default: TORCH_CHECK(false, "dtype not in the StitchCUDA ABI");
  }
  return -1;
}

static std::vector<StitchTensor> stitch_args(const std::vector<torch::Tensor>& tensors) {
  std::vector<StitchTensor> args(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    TORCH_CHECK(t.dim() <= STITCH_MAX_DIMS, "too many dims for the StitchCUDA ABI");
    args[i].data = t.data_ptr();
    args[i].dtype = stitch_dtype_code(t.scalar_type());
    args[i].ndim = (int32_t)t.dim();
    for (int64_t d = 0; d < t.dim(); ++d) { args[i].sizes[d] = t.size(d); args[i].strides[d] = t.stride(d); }
  }
  return args;
}

// segment < 0: the whole forward (stitch_forward); else a partial candidate's segment.
void stitch_call_torch(int64_t segment, std::vector<torch::Tensor> tensors) {
  std::vector<StitchTensor> args = stitch_args(tensors);
  int rc = (int)cudaErrorInvalidValue;  // the entry point this candidate does not export
#if STITCH_HAS_FORWARD
  if (segment < 0) rc = stitch_forward(args.data(), (int32_t)args.size(), at::cuda::getCurrentCUDAStream());
#endif
#if STITCH_HAS_SEGMENT
  if (segment >= 0) rc = stitch_segment((int32_t)segment, args.data(), (int32_t)args.size(), at::cuda::getCurrentCUDAStream());
#endif
  TORCH_CHECK(rc == 0, "stitch_forward returned ", rc, " (", cudaGetErrorString((cudaError_t)rc), ")");
}
'''

_HEADER = '''# KernelBench export of a StitchCUDA candidate, written by stitchcuda_harness (exportKernelBench).
# One file: the CUDA source (C ABI) and a torch wrapper built by load_inline, then the candidate's ModelNew.
'''


def _inline_abi_header(cuda: str) -> str:
    with open(os.path.join(INCLUDE_DIR, "stitch_abi.h")) as f:
        header = f.read()
    return re.sub(r'^\s*#\s*include\s*[<"]stitch_abi\.h[>"]\s*$', lambda _m: header, cuda, flags=re.M)


def export_source(candidate: str) -> str:
    files = resolve_candidate(candidate)
    with open(files.python, encoding="utf-8") as f:
        py = f.read()
    if files.cuda is None:
        return py  # already a one-file KernelBench candidate
    with open(files.cuda, encoding="utf-8") as f:
        cuda = _inline_abi_header(f.read())
    if "stitch_abi.h" in cuda:
        raise HarnessError("export_failed", "could not inline stitch_abi.h", files.cuda)
    name = "stitch_" + hashlib.sha256((cuda + py).encode()).hexdigest()[:12]
    # A partial candidate exports only stitch_segment, a hand-written one often only
    # stitch_forward: the wrapper calls what the candidate defines.
    defines = lambda fn: int(re.search(rf'extern\s+"C"\s+int\s+{fn}\s*\(', cuda) is not None)  # noqa: E731
    wrapper = f"#define STITCH_HAS_FORWARD {defines('stitch_forward')}\n#define STITCH_HAS_SEGMENT {defines('stitch_segment')}\n" + _WRAPPER
    # The libraries the candidate calls, linked as the fast path links them (-I/-L of a cuDNN
    # that came as a pip wheel are this machine's paths).
    flags = library_flags(cuda, find_nvcc())
    includes = [f"-I{flags[i + 1]}" for i, f in enumerate(flags) if f == "-I"]
    ldflags = [f for i, f in enumerate(flags) if f != "-I" and (i == 0 or flags[i - 1] != "-I")]
    future = [l for l in py.splitlines() if l.startswith("from __future__")]
    body = [l for l in py.splitlines() if not l.startswith("from __future__")
            and not re.match(r"^\s*from\s+stitchcuda_harness\.abi\s+import\s+load_library\s*$", l)]
    parts = future + [_HEADER, "import torch", "from torch.utils.cpp_extension import load_inline", "",
                      f"_CUDA_SOURCE = r'''{cuda}\n{wrapper}'''", "",
                      f"_ext = load_inline(name={name!r}, cpp_sources=['void stitch_call_torch(int64_t segment, std::vector<torch::Tensor> tensors);'],",
                      "                   cuda_sources=[_CUDA_SOURCE], functions=['stitch_call_torch'],",
                      f"                   extra_cuda_cflags={['-O3'] + includes!r}, extra_ldflags={ldflags!r}, verbose=False)",
                      "", "",
                      "class _InlineLibrary:",
                      '    """Same interface as stitchcuda_harness.abi.StitchLibrary: one call per forward."""', "",
                      "    def forward(self, *tensors):", "        _ext.stitch_call_torch(-1, list(tensors))", "",
                      "    def segment(self, index, *tensors):", "        _ext.stitch_call_torch(index, list(tensors))", "", "",
                      "def load_library(library):", "    return library", "", "",
                      "__stitch_library__ = _InlineLibrary()", "", *body]
    return "\n".join(parts) + "\n"


def write_export(candidate: str, out_path: str) -> str:
    text = export_source(candidate)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)
    return os.path.abspath(out_path)


def check_export(reference: str, candidate: str, exported: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run the fast-path candidate and the export on the same seeded inputs and compare; the
    export's load_inline build time is reported (the figure the fast path exists to avoid)."""
    import time

    from .environment_info import pick_device
    from .module_loader import load_module
    from .nvcc_build import Builder
    from .runtime_guards import StateSnapshot
    from .task_loader import check_tensor_outputs, load_task
    from .tolerance import compare

    device = pick_device(params.get("device"))
    task = load_task(reference, params)
    files = resolve_candidate(candidate)
    seed = int(params.get("seed", 0))
    cache = params.get("cacheDir") or DEFAULT_CACHE_DIR
    injected = None
    if files.cuda:
        build = Builder(cache, params.get("arch")).build(files.cuda)
        if not build.ok:
            raise HarnessError("build_error", "; ".join(d.message for d in build.diagnostics[:3]), files.cuda)
        injected = {"__stitch_library__": build.library}
    snapshot = StateSnapshot.take()  # the export check runs candidate code too: isolate it the same way
    fast_cls = load_module(files.python, "candidate", injected).ModelNew
    t0 = time.perf_counter()
    export_cls = load_module(exported, "export").ModelNew
    load_inline_s = time.perf_counter() - t0
    init = task.init_inputs(seed)
    torch.manual_seed(seed)
    fast = fast_cls(*init).to(device)
    torch.manual_seed(seed)
    exp = export_cls(*init).to(device)
    # Nothing is copied: both forms construct themselves as Model does, under the same seed.
    results = []
    for trial in range(int(params.get("trials", 2))):
        inputs = task.inputs(seed + trial, device)
        with torch.no_grad():
            a = check_tensor_outputs(fast(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]), files.python, None, "candidate")
            b = check_tensor_outputs(exp(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]), exported, None, "candidate")
        cmp = [compare(y, x, params.get("tolerance")) for x, y in zip(a, b)]
        results.append({"trial": trial, "same": len(a) == len(b) and all(c.ok for c in cmp),
                        "bitwise_equal": len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b)),
                        "max_abs_diff": max((c.max_abs_err for c in cmp), default=0.0)})
    patches = snapshot.check_and_restore("in the export check", set())
    return {"same": all(r["same"] for r in results), "trials": results, "loadInlineSeconds": load_inline_s,
            "guardFindings": [{"check": f.check, "message": f.message} for f in patches]}
