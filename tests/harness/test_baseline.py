"""The reference's baseline cache (baseline.py): eager timed alone, as the optimize loop times it before
the first verify, serves a request without torch.compile only; a request with torch.compile times both
again side by side, and that result then serves both. torch.compile itself is replaced by the eager model
here (its compile on the CPU takes minutes); what is pinned is which request is answered from the cache."""
from __future__ import annotations

import os
import tempfile
import unittest
from unittest import mock

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
import torch

from stitchcuda_harness import baseline
from stitchcuda_harness.task_loader import load_task

SMALL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "small_elementwise.py")


class BaselineCache(unittest.TestCase):
    def setUp(self) -> None:
        self.cache = tempfile.mkdtemp(prefix="stitch-baseline-")
        self.task = load_task(SMALL)
        self.compiles = 0

        def fake_compile(task, model, sets, device):
            self.compiles += 1
            return model, {"mode": "default"}
        patcher = mock.patch.object(baseline, "_compile", fake_compile)
        patcher.start()
        self.addCleanup(patcher.stop)

    def run_baseline(self, compile_: bool) -> dict:
        return baseline.run_baseline(self.task, torch.device("cpu"), {
            "cacheDir": self.cache, "compile": compile_, "timer": {"maxSeconds": 0.01}})

    def test_eager_alone_then_with_torch_compile(self) -> None:
        first = self.run_baseline(False)
        self.assertFalse(first["cached"])
        self.assertIsNone(first["compile"])
        self.assertTrue(self.run_baseline(False)["cached"])
        full = self.run_baseline(True)
        self.assertFalse(full["cached"], "a cached eager-only timing must not answer for torch.compile")
        self.assertIn("median_ms", full["compile"])
        self.assertEqual(self.compiles, 1)
        for compile_ in (True, False):
            again = self.run_baseline(compile_)
            self.assertTrue(again["cached"])
            self.assertEqual(again["compile"], full["compile"])
        self.assertEqual(self.compiles, 1)


if __name__ == "__main__":
    unittest.main()
