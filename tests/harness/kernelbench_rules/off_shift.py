# For lossy_shift.py: 2e-3 from the truth, further than eager is: no rule passes it.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x + 2e-3
