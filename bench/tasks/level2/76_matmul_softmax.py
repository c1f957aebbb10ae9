# softmax(a @ b, dim=-1): a 4096x512 @ 512x4096 matmul then a row softmax over its 64 MB output. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.softmax(torch.matmul(a, b), dim=-1)


def get_inputs():
    return [torch.randn(4096, 512), torch.randn(512, 4096) / 512 ** 0.5]


def get_init_inputs():
    return []
