# RMS norm written out, with a learned scale. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(4096) + 0.1 * torch.randn(4096))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def get_inputs():
    return [torch.randn(8192, 4096)]


def get_init_inputs():
    return []
