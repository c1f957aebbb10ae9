# Parameters made with torch.empty, as if the judge would copy Model's state in: nothing is copied,
# so its weights are garbage (issue 20: KernelBench saw NaN and 1e29 from such exports).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_out, d_in))
        self.bias = nn.Parameter(torch.empty(d_out))
        self.bn = nn.BatchNorm1d(d_out)

    def forward(self, x):
        return self.bn(F.linear(x, self.weight, self.bias))
