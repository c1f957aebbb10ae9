# BatchNorm2d in inference mode with non-trivial running statistics. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(64)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
        self.bn.eval()

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(16, 64, 128, 128)]


def get_init_inputs():
    return []
