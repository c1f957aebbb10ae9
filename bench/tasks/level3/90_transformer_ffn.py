# A post-LN transformer FFN block: LayerNorm(x + Linear(GELU(Linear(x)))), d_model 768, d_ff 3072, 8x512 tokens. (StitchCUDA built-in optimizer suite, KernelBench format)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        h = self.fc2(torch.nn.functional.gelu(self.fc1(x)))
        return self.norm(x + h)


def get_inputs():
    return [torch.randn(8, 512, 768)]


def get_init_inputs():
    return [768, 3072]
