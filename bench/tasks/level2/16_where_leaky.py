# A hand-written leaky ReLU with where, clamped. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp(torch.where(x > 0, x, x * 0.1), max=2.0)


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return []
