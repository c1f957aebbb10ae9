"""Tolerance logic: dtype defaults, overrides, NaN/Inf rules, shape and dtype mismatches."""
from __future__ import annotations

import unittest

import torch

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
from stitchcuda_harness.tolerance import compare, compare_with_truth, summary, tensors_equal, tolerance_for


class ToleranceTest(unittest.TestCase):
    def test_defaults_per_dtype(self) -> None:
        self.assertEqual(tolerance_for(torch.float32), (1e-4, 1e-4))
        self.assertEqual(tolerance_for(torch.float16), (1e-2, 1e-2))
        self.assertEqual(tolerance_for(torch.int64), (0.0, 0.0))

    def test_overrides_global_then_per_dtype(self) -> None:
        self.assertEqual(tolerance_for(torch.float32, {"atol": 1e-3}), (1e-3, 1e-4))
        self.assertEqual(tolerance_for(torch.float32, {"atol": 1e-3, "float32": {"rtol": 5e-3}}), (1e-3, 5e-3))

    def test_fp32_error_just_inside_and_outside(self) -> None:
        ref = torch.ones(100)
        self.assertTrue(compare(ref + 1.5e-4, ref).ok)   # atol + rtol*|1| = 2e-4
        bad = compare(ref + 3e-4, ref)
        self.assertFalse(bad.ok)
        self.assertEqual(bad.mismatched, 100)

    def test_nan_where_reference_is_finite_fails(self) -> None:
        ref = torch.zeros(4)
        out = ref.clone()
        out[2] = float("nan")
        c = compare(out, ref)
        self.assertTrue(c.nan_inf_introduced)
        self.assertFalse(c.ok)

    def test_nan_and_inf_matching_the_reference_pass(self) -> None:
        ref = torch.tensor([float("nan"), float("inf"), 1.0])
        self.assertTrue(compare(ref.clone(), ref).ok)
        self.assertFalse(compare(torch.tensor([float("nan"), -float("inf"), 1.0]), ref).ok)

    def test_shape_and_dtype_mismatch(self) -> None:
        self.assertFalse(compare(torch.ones(3), torch.ones(4)).shape_ok)
        c = compare(torch.ones(3, dtype=torch.float64), torch.ones(3))
        self.assertFalse(c.dtype_ok)
        self.assertFalse(c.ok)

    def test_integers_compare_exactly(self) -> None:
        self.assertFalse(compare(torch.tensor([1, 2]), torch.tensor([1, 3])).ok)

    def test_slices_give_the_whole_tensors_answer(self) -> None:
        # Multi-GB outputs are compared in slices (no full-size float64 temporaries); any slicing,
        # contiguous or along dim 0 of a transposed view, must give the one-piece answer.
        gen = torch.Generator().manual_seed(3)
        ref = torch.randn(37, 53, generator=gen)
        out = ref + torch.randn(37, 53, generator=gen) * 1e-4
        out[3, 4], ref[5, 6], out[5, 6], ref[7, 8] = float("nan"), float("nan"), float("nan"), float("inf")
        out[7, 8] = float("inf")
        out[9, 10] = float("-inf")
        for a, e in ((out, ref), (out.t(), ref.t()), (out[:, 1:], ref[:, 1:])):
            whole = compare(a, e, limit=1 << 30)
            for limit in (1, 7, 53, 1000):
                self.assertEqual(compare(a, e, limit=limit), whole, limit)
            self.assertGreater(whole.mismatched, 0)
            self.assertTrue(whole.nan_inf_introduced)
        self.assertFalse(tensors_equal(ref.t(), ref.t().clone(), limit=5))  # NaN != NaN, as torch.equal
        self.assertFalse(tensors_equal(out[:, 4:6], out[:, 4:6].clone(), limit=5))
        x = torch.randn(40, 30, generator=gen)
        self.assertTrue(tensors_equal(x.t(), x.t().clone(), limit=7))

    def test_kernelbench_strict_count_is_allclose_at_1e4(self) -> None:
        ref = torch.ones(10)
        c = compare(ref + 1.5e-4, ref, {"atol": 1e-2, "rtol": 1e-2})
        self.assertTrue(c.ok)
        self.assertEqual(c.strict_mismatched, 0)
        self.assertEqual(compare(ref + 3e-4, ref, {"atol": 1e-2, "rtol": 1e-2}).strict_mismatched, 10)
        both_nan = torch.tensor([float("nan")])
        self.assertTrue(compare(both_nan, both_nan).ok)
        self.assertFalse(compare(both_nan, both_nan, equal_nan=False).ok)  # torch.allclose's default

    def test_truth_rule(self) -> None:
        truth = torch.linspace(-2, 2, 101, dtype=torch.float64)
        ref = (truth + 5e-4).float()            # eager: 5e-4 off everywhere
        closer = (truth + 1e-5).float()         # 1e-5 off: fails 1e-4 against eager, closer to the truth
        further = (truth - 1e-3).float()        # 1e-3 off: further than eager is
        self.assertFalse(compare(closer, ref).ok)
        good = compare_with_truth(closer, ref, truth, 1e-4, 1e-4, limit=13)
        self.assertTrue(good.passed)
        self.assertLess(good.candidate_err, good.reference_err)
        bad = compare_with_truth(further, ref, truth, 1e-4, 1e-4, limit=13)
        self.assertFalse(bad.passed)
        self.assertEqual(bad.mismatched, 101)
        self.assertEqual(compare_with_truth(further, ref, truth, 1e-4, 1e-4), bad)

    def test_truth_rule_bounds_by_the_references_worst_error(self) -> None:
        # Two TF32-like results: each 5e-4 off the truth at most, rounding differently per element.
        g = torch.Generator().manual_seed(0)
        truth = torch.linspace(-2, 2, 1001, dtype=torch.float64)
        ref = (truth + (torch.rand(1001, generator=g, dtype=torch.float64) - 0.5) * 1e-3).float()
        cand = (truth + (torch.rand(1001, generator=g, dtype=torch.float64) - 0.5) * 1e-3).float()
        self.assertFalse(compare(cand, ref).ok)
        same = compare_with_truth(cand, ref, truth, 1e-4, 1e-4, limit=97)
        self.assertTrue(same.passed)  # as accurate as eager at its worst: never rejected for it
        # Off by more than eager's worst error plus the tolerance at one element: rejected there.
        worse = cand.clone()
        worse[500] = float(truth[500]) + same.reference_err + 2e-4
        bad = compare_with_truth(worse, ref, truth, 1e-4, 1e-4, limit=97)
        self.assertEqual((bad.passed, bad.mismatched), (False, 1))

    def test_truth_on_sampled_rows(self) -> None:
        # A [16, 64] output, eager and the candidate each TF32-like off the truth; the truth on rows 0, 5, 10, 15.
        g = torch.Generator().manual_seed(1)
        truth = torch.randn(16, 64, generator=g, dtype=torch.float64)
        ref = (truth + (torch.rand(16, 64, generator=g, dtype=torch.float64) - 0.5) * 1e-3).float()
        cand = (truth + (torch.rand(16, 64, generator=g, dtype=torch.float64) - 0.5) * 1e-3).float()
        rows = torch.tensor([0, 5, 10, 15])
        good = compare_with_truth(cand, ref, truth[rows], 1e-4, 1e-4, limit=100, rows=rows)
        self.assertTrue(good.passed)
        self.assertEqual((good.rows, good.of_rows), (4, 16))
        # A row the sample skipped, off by far more than any sampled discrepancy: not taken on trust.
        wrong = cand.clone()
        wrong[7] += 0.1
        bad = compare_with_truth(wrong, ref, truth[rows], 1e-4, 1e-4, limit=100, rows=rows)
        self.assertEqual((bad.passed, bad.mismatched), (False, 64))
        # A sampled row further from the truth than eager's worst: fails by the truth rule itself.
        wrong = cand.clone()
        wrong[5, 3] = float(truth[5, 3]) + 5e-3
        self.assertFalse(compare_with_truth(wrong, ref, truth[rows], 1e-4, 1e-4, rows=rows).passed)

    def test_summary_in_slices(self) -> None:
        x = torch.randn(1000, dtype=torch.float64) + 1e6
        self.assertAlmostEqual(summary(x, limit=77)["std"], float(x.std()), places=6)
        self.assertEqual(summary(x, limit=77)["fingerprint"][2], summary(x)["fingerprint"][2])
        self.assertEqual(summary(torch.full((100,), 3.0), limit=7)["std"], 0.0)


if __name__ == "__main__":
    unittest.main()
