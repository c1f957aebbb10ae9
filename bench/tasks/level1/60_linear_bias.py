# nn.Linear with bias: 8192 rows, 1024 -> 2048 features (addmm with a broadcast bias row). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(8192, 1024)]


def get_init_inputs():
    return [1024, 2048]
