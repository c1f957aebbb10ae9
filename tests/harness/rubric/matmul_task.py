# A square fp32 matmul (KernelBench format): the rubric tests' task, where a shared-memory tiled
# kernel and a naive one compute the same thing.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(256, 256), torch.randn(256, 256)]


def get_init_inputs():
    return []
