"""Reduced sizes (task_shrink.py, the `shrink` param of the task-loading methods): one rule for every
task, measured on the meta device, never allocating a task's original sizes."""
from __future__ import annotations

import os
import tempfile
import textwrap
import unittest

import torch

from stitchcuda_harness.task_loader import load_task, summarize

CPU = torch.device("cpu")


class TaskShrinkTest(unittest.TestCase):
    def write(self, body: str) -> str:
        fd, path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(textwrap.dedent(body))
        self.addCleanup(os.unlink, path)
        return path

    def test_a_6_gb_input_shrinks_its_batch_first_and_keeps_the_rest(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    return torch.relu(x)
            batch_size = 4096
            dim = 393216
            def get_inputs():
                return [torch.rand(batch_size, dim)]
            def get_init_inputs():
                return []
        """)
        task = load_task(path, {"shrink": True})
        self.assertEqual(task.shrink["changed"], {"batch_size": [4096, 32]})
        self.assertEqual(task.shrink["overBudget"], [])
        self.assertEqual(task.shrink["measure"]["basis"], "meta")
        summary = summarize(task, CPU)
        self.assertEqual(summary["inputs"][0]["shape"], [32, 393216])
        self.assertEqual(summary["shrink"]["sizes"]["dim"], 393216)

    def test_small_ints_stay_and_sizes_a_task_ties_together_shrink_together(self) -> None:
        # Broadcasting (B, N) * (B,) only works while B == N: halving one alone raises.
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def __init__(self, k):
                    super().__init__()
                    self.k = k
                def forward(self, p, t):
                    return torch.mean(torch.clamp(1 - p * t, min=0)) * self.k
            batch_size = 16384
            input_shape = (16384,)
            kernel = 3
            def get_inputs():
                return [torch.rand(batch_size, *input_shape), torch.rand(batch_size)]
            def get_init_inputs():
                return [kernel]
        """)
        task = load_task(path, {"shrink": {"inputBytes": 4 * 2**20}})
        changed = task.shrink["changed"]
        self.assertEqual(changed["batch_size"][1], changed["input_shape[0]"][1])
        self.assertNotIn("kernel", changed)
        self.assertEqual(task.shrink["overBudget"], [])
        summarize(task, CPU)  # the reduced task still runs

    def test_an_odd_size_stays_odd(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, a, b):
                    return a @ b
            M = 8205
            K = 2949
            N = 5921
            def get_inputs():
                return [torch.rand(M, K), torch.rand(K, N)]
            def get_init_inputs():
                return []
        """)
        task = load_task(path, {"shrink": True})
        self.assertTrue(task.shrink["changed"])
        for before, after in task.shrink["changed"].values():
            self.assertEqual(after % 2, 1, (before, after))

    def test_a_recurrent_model_shrinks_the_sequence_until_its_operators_fit(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = torch.nn.GRU(8, 8, 2, batch_first=True)
                def forward(self, x):
                    return self.rnn(x)[0]
            batch_size = 2
            seq_len = 4096
            def get_inputs():
                return [torch.rand(batch_size, seq_len, 8)]
            def get_init_inputs():
                return []
        """)
        task = load_task(path, {"shrink": {"operators": 2000}})
        self.assertLess(task.shrink["sizes"]["seq_len"], 4096)
        self.assertLessEqual(task.shrink["measure"]["operators"], 2000)
        self.assertEqual(task.shrink["sizes"]["batch_size"], 2)  # halving it leaves the operator count

    def test_a_task_that_raises_at_its_sizes_is_left_as_it_is(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    return torch.no_such_function(x)
            batch_size = 64
            def get_inputs():
                return [torch.rand(batch_size, 8)]
            def get_init_inputs():
                return []
        """)
        task = load_task(path, {"shrink": True})
        self.assertIn("no_such_function", task.shrink["error"])
        self.assertEqual(task.shrink["changed"], {})

    def test_without_the_param_nothing_changes(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    return x * 2
            batch_size = 4096
            def get_inputs():
                return [torch.rand(batch_size, 4)]
            def get_init_inputs():
                return []
        """)
        task = load_task(path)
        self.assertIsNone(task.shrink)
        self.assertNotIn("shrink", summarize(task, CPU))


if __name__ == "__main__":
    unittest.main()
