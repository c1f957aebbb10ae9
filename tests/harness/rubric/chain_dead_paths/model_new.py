# Thin ModelNew for the chain with dead paths (candidate.cu): one ctypes call per forward.
import torch
import torch.nn as nn
from stitchcuda_harness.abi import load_library


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_library(__stitch_library__)

    def forward(self, x, y):
        out = torch.empty_like(x)
        self.lib.forward(x.contiguous(), y.contiguous(), out)
        return out
