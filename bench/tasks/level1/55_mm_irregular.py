# GEMM with odd, non-tile-multiple sizes through torch.mm: M=4099, K=777, N=1000 (edge tiles on every side). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.mm(a, b)


def get_inputs():
    # b is scaled like a weight matrix (1/sqrt(K)) so outputs stay O(1): with two unit-variance
    # operands, fp32 rounding of each K-long sum alone exceeds the 1e-4 tolerance on small outputs.
    return [torch.randn(4099, 777), torch.randn(777, 1000) / 777 ** 0.5]


def get_init_inputs():
    return []
