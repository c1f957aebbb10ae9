"""The timer's floor correction (timer.py): what is taken off each sample and what is kept."""
from __future__ import annotations

import unittest

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
from stitchcuda_harness.timer import _stats


class FloorCorrection(unittest.TestCase):
    def test_floor_is_taken_off_every_sample_and_the_raw_median_kept(self) -> None:
        st = _stats([0.070, 0.068, 0.072], 1, "m", floor_ms=0.022)
        self.assertAlmostEqual(st.median_ms, 0.048)
        self.assertAlmostEqual(st.min_ms, 0.046)
        self.assertAlmostEqual(st.raw_median_ms, 0.070)
        self.assertAlmostEqual(st.timer_floor_ms, 0.022)

    def test_a_sample_under_the_floor_is_clamped_not_zero_or_negative(self) -> None:
        st = _stats([0.020, 0.021, 0.030], 1, "m", floor_ms=0.022)
        self.assertGreater(st.min_ms, 0.0)
        self.assertAlmostEqual(st.max_ms, 0.008)

    def test_without_a_floor_samples_are_unchanged(self) -> None:
        st = _stats([1.0, 3.0, 2.0], 2, "cpu_perf_counter")
        self.assertEqual((st.median_ms, st.raw_median_ms, st.timer_floor_ms), (2.0, 2.0, 0.0))


if __name__ == "__main__":
    unittest.main()
