# Linear 1024 -> 1024, then sigmoid, scaling and a residual add of the linear's own output (as KernelBench's Gemm_Sigmoid_Scaling_ResidualAdd) on 16384x1024. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        x = self.linear(x)
        return torch.sigmoid(x) * self.scale + x


def get_inputs():
    return [torch.randn(16384, 1024)]


def get_init_inputs():
    return [1024, 1024, 2.0]
