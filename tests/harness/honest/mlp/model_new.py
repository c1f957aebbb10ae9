# Thin ModelNew for the MLP block: the nn.Linear only holds the weights, created as the reference creates
# them (the same seed gives the same weights; nothing is copied); the fused GEMM+bias+ReLU kernel does the work.
import torch
import torch.nn as nn
from stitchcuda_harness.abi import load_library


class ModelNew(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.lib = load_library(__stitch_library__)

    def forward(self, x):
        out = torch.empty(x.shape[0], self.fc.weight.shape[0], device=x.device, dtype=x.dtype)
        self.lib.forward(x.contiguous(), self.fc.weight, self.fc.bias, out)
        return out
