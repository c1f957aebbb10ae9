"""A partial candidate (design §8) leaves operators in PyTorch and declares them in
STITCH_PYTORCH_OPS: the static and runtime compute guards accept exactly those, with their counts
per forward, and nothing else."""
from __future__ import annotations

import textwrap
import unittest

import torch

from stitchcuda_harness.runtime_guards import ComputeRecorder
from stitchcuda_harness.static_guards import StaticContext, scan_python

PARTIAL = textwrap.dedent('''
    import torch
    import torch.nn as nn
    STITCH_PYTORCH_OPS = {"aten::native_batch_norm": 1}

    class ModelNew(nn.Module):
        def forward(self, x):
            v = torch.ops.aten.view.default(x, [2, -1])
            _r = torch.ops.aten.native_batch_norm.default(x, None, None, None, None, True, 0.1, 1e-05)
            return _r[0]
''')


def checks(source: str) -> list[tuple[str, str]]:
    return [(f.check, f.message) for f in scan_python(source, "model_new.py", StaticContext())]


class StaticDeclaredOpsTest(unittest.TestCase):
    def test_declared_operators_and_views_pass(self) -> None:
        self.assertEqual(checks(PARTIAL), [])

    def test_an_undeclared_operator_is_pytorch_compute(self) -> None:
        source = PARTIAL.replace("return _r[0]", "return torch.ops.aten.relu.default(_r[0])")
        found = checks(source)
        self.assertEqual([c for c, _ in found], ["pytorch_compute"])
        self.assertIn("torch.ops.aten.relu.default", found[0][1])

    def test_without_the_declaration_every_operator_is_compute(self) -> None:
        source = PARTIAL.replace('STITCH_PYTORCH_OPS = {"aten::native_batch_norm": 1}', "")
        self.assertEqual([c for c, _ in checks(source)], ["pytorch_compute"])


class RuntimeDeclaredOpsTest(unittest.TestCase):
    def run_ops(self, calls: int) -> ComputeRecorder:
        rec = ComputeRecorder(("model_new.py",))
        x = torch.randn(4, 3, 2, 2)
        with rec, torch.no_grad():
            for _ in range(calls):
                torch.ops.aten.native_batch_norm.default(x, None, None, None, None, True, 0.1, 1e-05)
            torch.ops.aten.view.default(x, [4, -1])
        return rec

    def test_declared_count_is_accepted(self) -> None:
        self.assertEqual(self.run_ops(1).findings("model_new.py", {"aten::native_batch_norm": 1}), [])

    def test_more_calls_than_declared_are_flagged(self) -> None:
        found = self.run_ops(2).findings("model_new.py", {"aten::native_batch_norm": 1})
        self.assertEqual([f.check for f in found], ["pytorch_compute"])
        self.assertEqual(found[0].data["declared"], 1)

    def test_nothing_declared_flags_the_operator(self) -> None:
        self.assertEqual([f.data["op"] for f in self.run_ops(1).findings("model_new.py")], ["aten::native_batch_norm"])


if __name__ == "__main__":
    unittest.main()
