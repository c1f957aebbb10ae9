# Linear 1024 -> 1024, GELU, softmax over the features (as KernelBench's Matmul_GELU_Softmax) on 8192x1024. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(torch.nn.functional.gelu(self.linear(x)), dim=1)


def get_inputs():
    return [torch.randn(8192, 1024)]


def get_init_inputs():
    return [1024, 1024]
