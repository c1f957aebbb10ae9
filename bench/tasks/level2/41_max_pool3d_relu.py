# 3-D max pooling followed by ReLU (the activation fuses after the window). (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x):
        return torch.relu(self.pool(x))


def get_inputs():
    return [torch.randn(4, 32, 32, 64, 64)]


def get_init_inputs():
    return []
