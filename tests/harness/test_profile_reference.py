"""The reference profile's lines name the operators the model's own lines call, each with the time of
everything it runs inside; PyTorch's internals (the `aten::to` wrapping a scalar, `aten::empty`) and
the profiler's own bookkeeping never show as operators of a line."""
from __future__ import annotations

import os
import tempfile
import unittest

import torch

from stitchcuda_harness.profile_reference import profile_reference
from stitchcuda_harness.task_loader import load_task

MODEL = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(32, 64)

    def forward(self, x):
        h = x * 2.0 + 0.5
        h = torch.relu(self.up(h))
        return h.to(torch.float64)


def get_inputs():
    return [torch.randn(16, 32)]
"""


class ProfileReferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        fd, cls.path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(MODEL)
        cls.result = profile_reference(load_task(cls.path), torch.device("cpu"), {"iterations": 2})
        cls.ops = {l["line"]: [o["name"] for o in l["ops"]] for l in cls.result["lines"]}

    @classmethod
    def tearDownClass(cls) -> None:
        os.unlink(cls.path)

    def test_each_line_lists_the_operators_it_calls(self) -> None:
        self.assertEqual(sorted(self.ops[11]), ["aten::add", "aten::mul"])   # no aten::to / _to_copy / copy_ for the scalars
        self.assertEqual(sorted(self.ops[12]), ["aten::linear", "aten::relu"])  # not addmm, t, or relu's clamp_min
        self.assertEqual(self.ops[13], ["aten::to"])  # the model's own .to() is its operator

    def test_an_operator_carries_the_time_of_what_it_runs(self) -> None:
        for line in self.result["lines"]:
            self.assertAlmostEqual(sum(o["timeUs"] for o in line["ops"]), line["timeUs"], places=6)
            self.assertTrue(all(o["calls"] == 1 for o in line["ops"]), line)
        self.assertEqual(self.result["unattributed"]["ops"], [])  # the line ranges allocate nothing of their own


if __name__ == "__main__":
    unittest.main()
