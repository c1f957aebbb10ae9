# Linear then GELU(approximate='tanh'): a GPT-2-style FFN up-projection, 8192 rows, 768 -> 3072. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(self.linear(x))


def get_inputs():
    return [torch.randn(8192, 768)]


def get_init_inputs():
    return [768, 3072]
