"""The fp64 truth on a sample of rows (ground_truth.GroundTruth) where the whole truth does not fit:
rows spread over the batch for a model whose rows are independent; skipped, with the reason, for a
model whose rows interact (training-mode BatchNorm) or whose output has no batch dim."""
from __future__ import annotations

import unittest

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
import torch

from stitchcuda_harness.ground_truth import GroundTruth


def truth_for(model: torch.nn.Module, x: torch.Tensor, free: int) -> tuple:
    with torch.no_grad():
        out = [model(x)]
    return GroundTruth(model, "model.py", lambda: free).outputs([x], out), out


class SampledTruthTest(unittest.TestCase):
    def setUp(self) -> None:
        torch.manual_seed(0)
        self.x = torch.randn(64, 32)

    def test_whole_truth_where_it_fits(self) -> None:
        (truth, why), _ = truth_for(torch.nn.Linear(32, 16), self.x, free=1 << 30)
        self.assertEqual(why, "")
        self.assertIsNone(truth.rows)
        self.assertEqual(truth.tensors[0].dtype, torch.float64)

    def test_rows_spread_over_the_batch_where_it_does_not(self) -> None:
        model = torch.nn.Linear(32, 16)
        # Room for the weights and a few rows, not the whole batch.
        (truth, why), out = truth_for(model, self.x, free=40_000)
        self.assertEqual(why, "")
        self.assertEqual(truth.rows.tolist(), [0, 9, 18, 27, 36, 45, 54, 63])
        self.assertIn("on 8 of 64 rows", truth.why_sampled)
        expected = model.double()(self.x.double()[truth.rows])
        self.assertTrue(torch.equal(truth.tensors[0], expected.detach()))

    def test_rows_that_interact_are_not_sampled(self) -> None:
        model = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.BatchNorm1d(16))  # training mode
        (truth, why), _ = truth_for(model, self.x, free=40_000)
        self.assertIsNone(truth)
        self.assertIn("rows are not independent", why)
        self.assertEqual(float(model[1].num_batches_tracked), 1.0)  # only the reference's own forward moved it

    def test_an_output_without_the_batch_dim_is_not_sampled(self) -> None:
        class Loss(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(32, 1)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.linear(x).sum()

        (truth, why), _ = truth_for(Loss(), self.x, free=100)
        self.assertIsNone(truth)
        self.assertIn("no batch dim", why)

if __name__ == "__main__":
    unittest.main()
