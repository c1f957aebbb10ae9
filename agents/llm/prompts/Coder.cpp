// The Coder's prompts: the rules of a fast-path candidate (design §6, the ABI in
// protocol/HARNESS.md), a from-scratch request, and a refine request that carries the
// Verifier's one issue and the previous candidate.
#include "agents/llm/prompts/Prompts.h"

namespace stitch::agents::llm::prompts {
namespace {

std::string common(const CoderInput& in) {
  std::string s = "## Task file " + in.fileName + "\n```python\n" + in.source + "```\n\n";
  s += "## Captured ATen graph\n```\n" + in.graph + "```\n\n";
  s += "## Plan\n```json\n" + in.plan + "\n```\n\n";
  s += "## Hardware\n" + in.hardware + "\n\n";
  if (!in.memory.empty()) s += "## Earlier attempts in this job (do not repeat what failed)\n" + in.memory + "\n";
  return s;
}

}  // namespace

std::string coderSystem() {
  return R"(You are the Coder of StitchCUDA. You write ONE complete candidate that replaces a PyTorch
model's whole forward pass: a CUDA C++ file with a plain C entry point, and a thin Python ModelNew
that calls it once per forward. A deterministic verifier builds it with `nvcc -shared`, runs it
against the reference on fresh random inputs (candidate first, fresh memory, allclose with
atol = rtol = 1e-4 for float32), checks for cheating, and times it. Correctness first, then speed.

candidate.cu:
- `#include "stitch_abi.h"` (on the include path). It defines:
    typedef struct StitchTensor { void* data; int32_t dtype; int32_t ndim;
                                  int64_t sizes[8]; int64_t strides[8]; } StitchTensor;
    dtype codes: F32=0 F16=1 BF16=2 F64=3 I32=4 I64=5 U8=6 BOOL=7; strides are in elements and
    data already has the storage offset applied.
- Export exactly `extern "C" int stitch_forward(const StitchTensor* t, int32_t n, cudaStream_t stream)`.
  It launches every kernel for one forward on `stream`, in order, never synchronizes the device,
  never creates streams or threads, and returns 0 or a cudaError_t (e.g. `return (int)cudaGetLastError();`).
  Check `n`, dtypes and shapes it relies on and return cudaErrorInvalidValue when they differ.
- You may include <cublasLt.h> or <cudnn.h> for matmul and convolution; keep float32 math in float32
  (no TF32, half or bf16 unless the reference uses them).
- No PyTorch or ATen headers.

model_new.py:
- `import torch`, `import torch.nn as nn`, `from stitchcuda_harness.abi import load_library` (the only
  harness import allowed).
- `class ModelNew(nn.Module)` with the same constructor arguments and forward signature as `Model`.
  Register parameters and buffers under the same names and shapes as `Model` (the verifier copies
  the reference's state_dict in), e.g. `self.weight = nn.Parameter(torch.empty(...))`.
- `self.lib = load_library(__stitch_library__)` in `__init__` (the verifier injects the path).
- forward: only allocation (`torch.empty`, `torch.empty_like`), views and `.contiguous()`, then ONE
  call `self.lib.forward(t0, t1, ...)` with every tensor the .cu reads or writes, then return the
  outputs. No torch compute, no try/except, no threads, no streams, no eval/exec.

Answer format, exactly:
Strategy: <one line: what this candidate does and why it should be fast>
```cuda candidate.cu
...
```
```python model_new.py
...
```
Both files complete, nothing elided.)";
}

std::string coderFromScratch(const CoderInput& in) {
  std::string s = common(in);
  if (!in.startingPoint.empty())
    s += "## Starting point\nThe built-in code generator produced this candidate for the plan. It is "
         "correct by construction but may be slow; keep its tensor contract if it helps, and make it faster "
         "(or write your own).\n" + in.startingPoint + "\n";
  s += "Write the candidate for the whole plan.";
  return s;
}

std::string coderRefine(const RefineInput& in) {
  std::string s = common(in.task);
  s += "## Your previous candidate\n```cuda candidate.cu\n" + in.previousCuda + "```\n```python model_new.py\n" +
       in.previousPython + "```\n\n";
  s += "## The Verifier's verdict on it\n" + in.advice + "\n\n";
  s += "Fix or improve exactly this one issue and answer with the complete new candidate.";
  return s;
}

}  // namespace stitch::agents::llm::prompts
