# x @ W^T, halved, summed over the features (keepdim) and scaled (as KernelBench's Gemm_Divide_Sum_Scaling) on 16384x1024 -> 1024. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, hidden, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden, in_features) / in_features ** 0.5)
        self.scale = scale

    def forward(self, x):
        x = torch.matmul(x, self.weight.T)
        x = x / 2
        x = torch.sum(x, dim=1, keepdim=True)
        return x * self.scale


def get_inputs():
    return [torch.randn(16384, 1024)]


def get_init_inputs():
    return [1024, 1024, 1.5]
