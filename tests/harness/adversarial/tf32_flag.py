# Cheat: turns on TF32 matmuls without the job opting in (then its kernel could use tensor cores).
import torch
import torch.nn as nn
from stitchcuda_harness.abi import load_library


class ModelNew(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        torch.backends.cuda.matmul.allow_tf32 = True
        self.fc = nn.Linear(d_in, d_out)
        self.lib = load_library(__stitch_library__)

    def forward(self, x):
        out = torch.empty(x.shape[0], self.fc.weight.shape[0], device=x.device, dtype=x.dtype)
        self.lib.forward(x.contiguous(), self.fc.weight, self.fc.bias, out)
        return out
