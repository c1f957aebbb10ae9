# Attention-style softmax of scaled scores plus a mask bias. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, s, mask):
        return torch.softmax(s * 0.125 + mask, dim=-1)


def get_inputs():
    return [torch.randn(16, 16, 256, 512), torch.randn(256, 512)]


def get_init_inputs():
    return []
