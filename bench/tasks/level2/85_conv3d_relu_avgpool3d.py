# 3x3x3 Conv3d, ReLU, then 2x2x2 AvgPool3d: 16 -> 32 channels on 8x16x16x64x64 volumes. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(16, 32, kernel_size=3, padding=1)
        self.pool = nn.AvgPool3d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(8, 16, 16, 64, 64)]


def get_init_inputs():
    return []
