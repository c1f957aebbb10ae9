# Linear (with bias) then ReLU: an MLP hidden layer, 32768 rows, 256 -> 1024 features. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(32768, 256)]


def get_init_inputs():
    return [256, 1024]
