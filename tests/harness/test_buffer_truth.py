"""Buffers after the trials (model_state.buffer_differences): running statistics within tolerance
of the reference's pass; outside it they pass only by the truth rule, no further from the fp64
truth than the reference's own, plus the tolerance; an integer counter compares exactly."""
from __future__ import annotations

import unittest

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
import torch

from stitchcuda_harness.model_state import buffer_differences


def bn(mean: list[float], batches: int = 6) -> torch.nn.BatchNorm1d:
    m = torch.nn.BatchNorm1d(len(mean))
    m.running_mean.copy_(torch.tensor(mean))
    m.num_batches_tracked.fill_(batches)
    return m


class BufferTruthRule(unittest.TestCase):
    truth = {"running_mean": torch.tensor([1.0, 2.0], dtype=torch.float64)}

    def test_within_tolerance_of_the_reference_passes_without_a_truth(self) -> None:
        self.assertEqual(buffer_differences(bn([1.0, 2.0]), bn([1.0, 2.00005]), None), ([], []))

    def test_as_far_from_the_truth_as_the_reference_passes_by_the_truth_rule(self) -> None:
        ref, cand = bn([1.001, 2.0]), bn([0.999, 2.0])  # eager 1e-3 off one way, the candidate the other
        mismatches, _ = buffer_differences(ref, cand, None)
        self.assertEqual(len(mismatches), 1)
        self.assertIn("running_mean", mismatches[0])
        self.assertEqual(buffer_differences(ref, cand, None, self.truth), ([], ["running_mean"]))

    def test_further_from_the_truth_than_the_reference_fails(self) -> None:
        mismatches, by_truth = buffer_differences(bn([1.001, 2.0]), bn([0.995, 2.0]), None, self.truth)
        self.assertEqual(by_truth, [])
        self.assertEqual(len(mismatches), 1)

    def test_a_counter_compares_exactly(self) -> None:
        mismatches, _ = buffer_differences(bn([1.0, 2.0], 6), bn([1.0, 2.0], 7), None, self.truth)
        self.assertEqual(len(mismatches), 1)
        self.assertIn("num_batches_tracked", mismatches[0])


if __name__ == "__main__":
    unittest.main()
