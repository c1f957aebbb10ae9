# 3x3 Conv2d 64 -> 128, a per-channel bias and scale, sigmoid, GroupNorm of 8 groups (as KernelBench's Conv2d_Add_Scale_Sigmoid_GroupNorm) on 16x64x64x64. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1)
        self.bias = nn.Parameter(0.1 * torch.randn(128, 1, 1))
        self.scale = nn.Parameter(1.0 + 0.1 * torch.randn(128, 1, 1))
        self.norm = nn.GroupNorm(8, 128)

    def forward(self, x):
        x = (self.conv(x) + self.bias) * self.scale
        return self.norm(torch.sigmoid(x))


def get_inputs():
    return [torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return []
