# An elementwise chain (KernelBench format): five PyTorch kernels in eager mode, one fused kernel's
# worth of work. Used by the harness's verify-turnaround benchmark.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.relu(x * y + 0.5) * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(2048, 4096), torch.randn(2048, 4096)]


def get_init_inputs():
    return []
