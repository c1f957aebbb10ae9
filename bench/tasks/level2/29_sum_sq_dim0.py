# Column sums of squares (reduction over the leading dim). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return (x * x).sum(dim=0)


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return []
