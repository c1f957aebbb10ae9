# A KernelBench-style load_inline candidate for the rubric tests: float4 loads, and a shared-memory
# array it never uses (the compiler removes it, so the compiled code shows no shared memory).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void relu_vec4(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
  __shared__ float unused[256];
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = x[i];
    y[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
  }
}

torch::Tensor relu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  long n4 = x.numel() / 4;
  relu_vec4<<<(n4 + 255) / 256, 256>>>((const float4*)x.data_ptr<float>(), (float4*)y.data_ptr<float>(), n4);
  return y;
}
"""

module = load_inline(name="inline_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return module.relu(x)
