# Linear then LayerNorm (a projection followed by its norm): 16384 rows, 512 -> 1024, affine LayerNorm. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(self.linear(x))


def get_inputs():
    return [torch.randn(16384, 512)]


def get_init_inputs():
    return [512, 1024]
