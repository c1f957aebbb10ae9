# Cheat: writes the result into its input and returns the input (no output allocation).
import torch.nn as nn
from stitchcuda_harness.abi import load_library


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_library(__stitch_library__)

    def forward(self, x, y):
        self.lib.forward(x, y, x)
        return x
