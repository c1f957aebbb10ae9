"""Deadlines for the stages of the user's model code (stage_deadline.py): a worker started with
--load-timeout answers a request whose model sleeps in __init__ or never returns from its forward
with `stage_timeout`, naming the stage and the line of the model it was at, then exits; stages
that finish in time answer as before."""
from __future__ import annotations

import os
import tempfile
import textwrap
import time
import traceback
import unittest

from tests.harness.worker_client import WorkerClient, WorkerDied
from stitchcuda_harness.stage_deadline import EXIT_STAGE_TIMEOUT, user_frame

HANGING_INIT = """
    import time
    import torch
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            time.sleep(3600)
        def forward(self, x):
            return x + 1
    def get_inputs():
        return [torch.ones(2)]
"""
ENDLESS_FORWARD = """
    import torch
    class Model(torch.nn.Module):
        def forward(self, x):
            while True:
                x = x + 0
    def get_inputs():
        return [torch.ones(2)]
"""
QUICK = """
    import torch
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + 1
    def get_inputs():
        return [torch.ones(2)]
"""


class StageDeadlineTest(unittest.TestCase):
    def task(self, body: str) -> str:
        fd, path = tempfile.mkstemp(suffix=".py", prefix="stage_")
        with os.fdopen(fd, "w") as f:
            f.write(textwrap.dedent(body))
        self.addCleanup(os.unlink, path)
        return path

    def load(self, path: str) -> tuple[dict, WorkerClient, float]:
        worker = WorkerClient(("--load-timeout", "1"))
        self.addCleanup(worker.kill)
        start = time.monotonic()
        reply = worker.request("loadTask", {"path": path, "device": "cpu"}, deadline_s=60)
        return reply, worker, time.monotonic() - start

    def assertTimedOut(self, body: str, stage: str, line: int) -> None:
        path = self.task(body)
        reply, worker, seconds = self.load(path)
        error = reply["error"]
        self.assertEqual(error["code"], "stage_timeout", error)
        self.assertEqual(error["details"]["stage"], stage)
        self.assertIn(f"{stage} did not finish within 1 s", error["message"])
        self.assertEqual((error["file"], error["line"]), (path, line), error["message"])
        self.assertLess(seconds, 30)
        with self.assertRaises(WorkerDied) as ended:
            worker.request("hello", deadline_s=30)
        self.assertEqual(ended.exception.exit_code, EXIT_STAGE_TIMEOUT)

    def test_an_init_that_sleeps_is_named_with_its_line(self) -> None:
        self.assertTimedOut(HANGING_INIT, "Model.__init__", 7)

    def test_a_forward_that_never_returns_is_named_with_its_line(self) -> None:
        self.assertTimedOut(ENDLESS_FORWARD, "the first Model.forward", 6)

    def test_stages_within_their_deadline_answer_as_before(self) -> None:
        reply, worker, _ = self.load(self.task(QUICK))
        self.assertEqual(reply["result"]["outputs"][0]["shape"], [2], reply)
        self.assertIn("result", worker.request("hello", deadline_s=30))
        worker.close()

    def test_the_frame_reported_is_the_innermost_in_the_users_file(self) -> None:
        stack = traceback.StackSummary.from_list([("/lib/torch/nn/module.py", 10, "_call_impl", "x"),
                                                  ("/home/u/model.py", 7, "forward", "y = self.f(x)"),
                                                  ("/home/u/model.py", 12, "f", "time.sleep(9)"),
                                                  ("/usr/lib/python3/time.py", 3, "sleep", None)])
        self.assertEqual(user_frame(stack, ("/home/u/model.py",)).lineno, 12)
        self.assertEqual(user_frame(stack, ("/elsewhere.py",)).filename, "/usr/lib/python3/time.py")


if __name__ == "__main__":
    unittest.main()
