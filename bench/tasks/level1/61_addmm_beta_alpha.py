# torch.addmm with beta=0.5, alpha=2.0 and a full MxN input C: 0.5*C + 2*(A @ B), 2048x4096 @ 4096x2048. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, c, a, b):
        return torch.addmm(c, a, b, beta=0.5, alpha=2.0)


def get_inputs():
    # b is scaled like a weight matrix (1/sqrt(K)) so outputs stay O(1): with two unit-variance
    # operands, fp32 rounding of each K-long sum alone exceeds the 1e-4 tolerance on small outputs.
    return [torch.randn(2048, 2048), torch.randn(2048, 4096), torch.randn(4096, 2048) / 4096 ** 0.5]


def get_init_inputs():
    return []
