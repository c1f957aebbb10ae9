# Cumulative product along a middle dim (a column scan); factors near 1 keep it finite. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumprod(x, dim=1)


def get_inputs():
    return [1.0 + 0.01 * torch.randn(64, 512, 512)]


def get_init_inputs():
    return []
