# 3x3 Conv2d 64 -> 128, InstanceNorm2d, division by a constant (as KernelBench's Conv2d_InstanceNorm_Divide) on 16x64x64x64. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1)
        self.norm = nn.InstanceNorm2d(128)

    def forward(self, x):
        return self.norm(self.conv(x)) / 2.0


def get_inputs():
    return [torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return []
