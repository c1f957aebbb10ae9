# Linear then exact (erf) GELU: a BERT-style FFN up-projection, 16384 rows, 512 -> 2048. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(16384, 512)]


def get_init_inputs():
    return [512, 2048]
