# A squeeze-and-excitation block: global average pool, 256 -> 16 -> 256 gate (ReLU, sigmoid), channel-wise rescale of 32x256x56x56. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return x * s[:, :, None, None]


def get_inputs():
    return [torch.randn(32, 256, 56, 56)]


def get_init_inputs():
    return [256, 16]
