"""The extra-thread guard (runtime_guards.ThreadWatch): threads the candidate's own thread starts
count, and stay counted while they run; a thread some other thread of the process starts meanwhile
(torch.compile's worker pool starting its timer) is not the candidate's."""
from __future__ import annotations

import threading
import unittest

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)

from stitchcuda_harness.runtime_guards import ThreadWatch


class ThreadWatchTest(unittest.TestCase):
    def test_a_thread_the_candidate_starts_is_counted_and_left_running(self) -> None:
        release = threading.Event()
        with ThreadWatch() as watch:
            threading.Thread(target=release.wait, name="escapes_the_timer").start()
        release.set()
        self.assertEqual(watch.started, ["escapes_the_timer"])
        self.assertEqual(watch.leftover, ["escapes_the_timer"])
        self.assertTrue(watch.findings("in trial 0"))

    def test_a_thread_started_by_another_thread_meanwhile_is_not_the_candidates(self) -> None:
        go, started, release = threading.Event(), threading.Event(), threading.Event()

        def pool() -> None:  # a thread of the process, started before the candidate runs
            go.wait()
            threading.Thread(target=release.wait, name="subproc_worker_timer").start()
            started.set()

        background = threading.Thread(target=pool, name="pool")
        background.start()
        with ThreadWatch() as watch:
            go.set()
            self.assertTrue(started.wait(10))
        release.set()
        background.join()
        self.assertEqual((watch.started, watch.leftover), ([], []))
        self.assertEqual(watch.findings("in trial 0"), [])


if __name__ == "__main__":
    unittest.main()
