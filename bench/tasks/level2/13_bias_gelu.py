# Bias add (broadcast over rows) then GELU. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias)


def get_inputs():
    return [torch.randn(4096, 4096), torch.randn(4096)]


def get_init_inputs():
    return []
