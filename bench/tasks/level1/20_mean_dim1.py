# Mean over the channel dim of a [B, C, L] tensor (strided reduction). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=1)


def get_inputs():
    return [torch.randn(64, 256, 2048)]


def get_init_inputs():
    return []
