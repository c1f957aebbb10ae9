# Row maxima with their indices (torch.max along a dim). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        values, indices = torch.max(x, dim=-1)
        return values, indices


def get_inputs():
    return [torch.randn(16384, 1024)]


def get_init_inputs():
    return []
