# A MobileNet depthwise-separable block: depthwise 3x3 conv-BN-ReLU, pointwise 1x1 conv-BN-ReLU, 128 -> 256 channels at 56x56, batch 32, BN in inference mode. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn

# fp32 convolutions: eager PyTorch runs cuDNN convolutions in TF32 by default (bench/results/precision_modes_2026-11-23_h100.md), ~2e-3 from an fp64 truth, which no fp32 kernel can match at 1e-4.
torch.backends.cudnn.allow_tf32 = False


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.depthwise = nn.Conv2d(cin, cin, kernel_size=3, padding=1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.pointwise = nn.Conv2d(cin, cout, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

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
        x = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(x)))


def get_inputs():
    return [torch.randn(32, 128, 56, 56)]


def get_init_inputs():
    return [128, 256]
