# 3x3 Conv2d (no bias) then BatchNorm2d in inference mode then ReLU: 64 -> 128 channels on 16x64x64x64. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(128)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
        self.bn.eval()

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return []
