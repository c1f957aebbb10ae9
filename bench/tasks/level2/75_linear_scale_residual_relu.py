# relu(linear(x) * scale + residual): Linear 1024 -> 1024 on 16384 rows, then scale, residual add and ReLU. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.scale = scale

    def forward(self, x, residual):
        return torch.relu(self.linear(x) * self.scale + residual)


def get_inputs():
    return [torch.randn(16384, 1024), torch.randn(16384, 1024)]


def get_init_inputs():
    return [1024, 0.5]
