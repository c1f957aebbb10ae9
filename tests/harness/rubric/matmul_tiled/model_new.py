# Thin ModelNew for the rubric tests' matmul: one ctypes call per forward.
import torch
import torch.nn as nn
from stitchcuda_harness.abi import load_library


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_library(__stitch_library__)

    def forward(self, a, b):
        out = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
        self.lib.forward(a.contiguous(), b.contiguous(), out)
        return out
