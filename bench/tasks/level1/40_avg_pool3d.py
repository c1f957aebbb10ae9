# 3-D average pooling, 3x3x3 window, stride 2, padding 1 (padding counted). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(4, 32, 32, 64, 64)]


def get_init_inputs():
    return []
