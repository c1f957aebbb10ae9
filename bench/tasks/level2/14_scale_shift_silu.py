# Per-channel scale and shift (NCHW broadcast) then SiLU. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale, shift):
        return torch.nn.functional.silu(x * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1))


def get_inputs():
    return [torch.randn(32, 64, 64, 128), torch.randn(64), torch.randn(64)]


def get_init_inputs():
    return []
