# LayerNorm (inference) with affine weights. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(4096)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(8192, 4096)]


def get_init_inputs():
    return []
