# 3x3 Conv2d then the mean over the spatial dims (global average pooling): 128 -> 256 channels on 32x128x32x32. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(128, 256, kernel_size=3, padding=1)

    def forward(self, x):
        return self.conv(x).mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(32, 128, 32, 32)]


def get_init_inputs():
    return []
