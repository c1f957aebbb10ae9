# Broadcast batched matmul, 3-D @ 2-D: (32, 512, 1024) @ (1024, 1024), one weight for every batch. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    # b is scaled like a weight matrix (1/sqrt(K)) so outputs stay O(1): with two unit-variance
    # operands, fp32 rounding of each K-long sum alone exceeds the 1e-4 tolerance on small outputs.
    return [torch.randn(32, 512, 1024), torch.randn(1024, 1024) / 1024 ** 0.5]


def get_init_inputs():
    return []
