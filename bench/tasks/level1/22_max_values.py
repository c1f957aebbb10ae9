# max over dim 1 (values only). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.max(x, dim=1)[0]


def get_inputs():
    return [torch.randn(8192, 4096)]


def get_init_inputs():
    return []
