# 3x3 Conv2d 64 -> 64, subtract, tanh, subtract, 2x2 average pooling (as KernelBench's Conv2d_Subtract_Tanh_Subtract_AvgPool) on 32x64x64x64. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 64, kernel_size=3, padding=1)
        self.pool = nn.AvgPool2d(2)

    def forward(self, x):
        x = torch.tanh(self.conv(x) - 0.5) - 0.2
        return self.pool(x)


def get_inputs():
    return [torch.randn(32, 64, 64, 64)]


def get_init_inputs():
    return []
