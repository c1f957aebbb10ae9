# InstanceNorm2d (no affine): statistics per sample and channel. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(64)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(16, 64, 128, 128)]


def get_init_inputs():
    return []
