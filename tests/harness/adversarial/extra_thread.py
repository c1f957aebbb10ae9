# Cheat: does the work on another host thread so the forward returns (and the timer stops) early.
import threading

import torch
import torch.nn as nn
from stitchcuda_harness.abi import load_library


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_library(__stitch_library__)

    def forward(self, x, y):
        out = torch.empty_like(x)
        threading.Thread(target=self.lib.forward, args=(x, y, out)).start()
        return out
