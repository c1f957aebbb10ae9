"""Tolerance logic: dtype defaults, overrides, NaN/Inf rules, shape and dtype mismatches."""
from __future__ import annotations

import unittest

import torch

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
from stitchcuda_harness.tolerance import compare, tolerance_for


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


if __name__ == "__main__":
    unittest.main()
