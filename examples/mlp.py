# A small MLP block named by a directive rather than KernelBench names.
# stitchcuda: model=MLPBlock inputs=make_inputs init=make_init
import torch
import torch.nn as nn


class MLPBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, x):
        return torch.relu(self.fc(x))


def make_inputs():
    return [torch.randn(256, 512)]


def make_init():
    return [512, 256]
