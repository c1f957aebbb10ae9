# 1-D max pooling with dilation. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=4, stride=2, padding=2, dilation=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(32, 128, 4096)]


def get_init_inputs():
    return []
