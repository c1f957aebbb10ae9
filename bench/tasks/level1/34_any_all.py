# Row-wise any/all of thresholds (boolean reductions; thresholds keep both outcomes likely). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.any(x > 3.0, dim=-1), torch.all(x > -3.0, dim=-1)


def get_inputs():
    return [torch.randn(32768, 512)]


def get_init_inputs():
    return []
