# A CNN stem of two Conv-BN-ReLU blocks (3 -> 32 stride 2, then 32 -> 64) on 32 RGB 224x224 images, BN in inference mode. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, stride):
        super().__init__(nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = ConvBNReLU(3, 32, stride=2)
        self.block2 = ConvBNReLU(32, 64, stride=1)

        # Inference-mode batch norms with non-trivial running statistics (as in 42_batch_norm_eval).
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                with torch.no_grad():
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 2.0)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)
                m.eval()

    def forward(self, x):
        return self.block2(self.block1(x))


def get_inputs():
    return [torch.randn(32, 3, 224, 224)]


def get_init_inputs():
    return []
