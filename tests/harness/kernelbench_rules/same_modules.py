# Built like Model (same modules, same order): under Model's seed it holds Model's weights.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.bn = nn.BatchNorm1d(d_out)

    def forward(self, x):
        return self.bn(self.fc(x))
