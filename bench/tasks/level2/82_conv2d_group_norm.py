# 3x3 Conv2d then GroupNorm (8 groups of 16 channels): 64 -> 128 channels on 16x64x64x64. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1)
        self.norm = nn.GroupNorm(8, 128)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(self.conv(x))


def get_inputs():
    return [torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return []
