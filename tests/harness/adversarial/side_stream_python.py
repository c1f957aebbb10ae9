# Cheat: launches on a private stream and returns without ordering it against the caller's stream.
import torch
import torch.nn as nn
from stitchcuda_harness.abi import load_library


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_library(__stitch_library__)
        self.side = torch.cuda.Stream()

    def forward(self, x, y):
        out = torch.empty_like(x)
        with torch.cuda.stream(self.side):
            self.lib.forward(x, y, out)
        return out
