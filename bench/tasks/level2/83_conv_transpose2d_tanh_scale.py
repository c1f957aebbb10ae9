# Strided ConvTranspose2d (2x upsampling), tanh, then a constant scale: 64 -> 32 channels, 64x64 -> 128x128. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(64, 32, kernel_size=4, stride=2, padding=1)
        self.scale = 2.0

    def forward(self, x):
        return torch.tanh(self.deconv(x)) * self.scale


def get_inputs():
    return [torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return []
