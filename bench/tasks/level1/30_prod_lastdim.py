# Row products of values near one. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.prod(x, dim=-1)


def get_inputs():
    return [1.0 + 0.01 * torch.randn(8192, 1024)]


def get_init_inputs():
    return []
