# For lossy_shift.py: x exactly, which is the fp64 truth, and up to 4.9e-4 from eager.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        out.copy_(x)
        return out
