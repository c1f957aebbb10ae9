"""The timer (timer.py): the floor correction, what is taken off each sample and what is kept, and
the order in which functions timed side by side take their turns."""
from __future__ import annotations

import unittest

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
import torch

from stitchcuda_harness.timer import Timer, TimerConfig, _stats, round_order


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


class SideBySide(unittest.TestCase):
    def test_each_function_starts_a_round_equally_often_and_all_run_in_every_round(self) -> None:
        names = ["floor", "eager", "candidate"]
        rounds = [round_order(names, i) for i in range(9)]
        self.assertTrue(all(sorted(r) == sorted(names) for r in rounds))
        self.assertEqual({n: [r[0] for r in rounds].count(n) for n in names}, {n: 3 for n in names})
        # Who runs right before whom changes too: no function always follows the same one's work.
        self.assertEqual(rounds[0], ["floor", "eager", "candidate"])
        self.assertEqual(rounds[1], ["eager", "candidate", "floor"])

    def test_every_function_gets_its_own_statistics_on_the_same_inputs(self) -> None:
        seen: dict[str, list[int]] = {"a": [], "b": []}
        sets = [[torch.tensor(i)] for i in range(3)]
        timer = Timer(torch.device("cpu"), TimerConfig(warmup=1, iterations=6, min_iterations=6))
        stats = timer.measure_side_by_side({"a": lambda x: seen["a"].append(int(x)),
                                            "b": lambda x: seen["b"].append(int(x))}, sets)
        self.assertEqual(set(stats), {"a", "b"})
        self.assertEqual(seen["a"], seen["b"])
        self.assertEqual(set(seen["a"]), {0, 1, 2})
        self.assertTrue(all(s.iterations == 6 for s in stats.values()))


if __name__ == "__main__":
    unittest.main()
