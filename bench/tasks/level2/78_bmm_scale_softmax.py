# Attention scores: softmax(bmm(q, k^T) / sqrt(d)) for 128 heads-by-batch, 512 tokens, head dim 64. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = head_dim ** -0.5

    def forward(self, q, k):
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        return torch.softmax(scores, dim=-1)


def get_inputs():
    return [torch.randn(128, 512, 64), torch.randn(128, 512, 64)]


def get_init_inputs():
    return [64]
