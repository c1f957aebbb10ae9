"""verify on CPU tensors: the honest host-side fast-path candidate passes every check; the
adversarial candidates that can run on CPU are rejected with their manifest's checks; the state
snapshot reports and undoes patches."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import unittest

import torch

from tests.harness import REPO
from stitchcuda_harness.nvcc_build import find_nvcc
from stitchcuda_harness.runtime_guards import StateSnapshot
from stitchcuda_harness.verifier import verify
from stitchcuda_harness.verify_config import VerifyConfig

HERE = os.path.join(REPO, "tests", "harness")
SMALL = os.path.join(HERE, "fixtures", "small_elementwise.py")


def run(task: str, candidate: str, **params: object) -> dict:
    cfg = VerifyConfig.from_params({"timing": False, "device": "cpu", "cacheDir": tempfile.gettempdir() + "/stitch-verify-cpu", **params})
    return verify(task, candidate, cfg).to_json()


class VerifyCpuTest(unittest.TestCase):
    @unittest.skipIf(find_nvcc() is None, "nvcc not installed")
    def test_honest_host_candidate_passes_with_timing(self) -> None:
        v = run(SMALL, os.path.join(HERE, "honest", "host_elementwise"), timing=True, compileBaseline=False, timer={"maxSeconds": 0.05})
        self.assertTrue(v["passed"], v["findings"])
        # Six trials, then two of the timed calls judged as trials too.
        self.assertEqual(len(v["trials"]), 8)
        self.assertEqual(v["trials"][5]["distribution"], "randn*3+0.5")
        self.assertTrue(all("timed call" in t["distribution"] and t["passed"] for t in v["trials"][6:]), v["trials"][6:])
        self.assertEqual((v["tolerance"]["atol"], v["tolerance"]["rtol"]), (1e-4, 1e-4))
        t = v["timing"]
        self.assertGreater(t["candidate"]["median_ms"], 0)
        # Eager is timed again beside the candidate; the speedup is that pair's ratio, and the
        # baseline's own eager timing is kept apart.
        self.assertIn("baseline_eager", t)
        self.assertAlmostEqual(t["speedup_vs_eager"], t["eager"]["median_ms"] / t["candidate"]["median_ms"])
        self.assertIsNone(t["speedup_vs_compile"])  # compileBaseline=False
        self.assertLess(v["ground_truth"]["candidate_max_abs_err"][0], 1e-5)

    @unittest.skipIf(find_nvcc() is None, "nvcc not installed")
    def test_a_candidate_wrong_only_in_the_timing_loop_fails_a_correctness_check(self) -> None:
        # The adversarial suite's call counter, over the host-side kernel CPU tests build.
        folder = tempfile.mkdtemp(prefix="stitch-counts-calls-")
        self.addCleanup(shutil.rmtree, folder)
        shutil.copy(os.path.join(HERE, "honest", "host_elementwise", "candidate.cu"), folder)
        shutil.copy(os.path.join(HERE, "adversarial", "counts_calls.py"), os.path.join(folder, "model_new.py"))
        v = run(SMALL, folder, timing=True, compileBaseline=False, timer={"maxSeconds": 0.05})
        self.assertFalse(v["passed"])
        self.assertEqual(set(v["failed_checks"]), {"output_mismatch"}, v["findings"])
        self.assertTrue(all(t["passed"] for t in v["trials"][:6]))  # right for every correctness trial
        timed = [f["message"] for f in v["findings"] if f["check"] == "output_mismatch"]
        self.assertTrue(timed and all("timed call" in m for m in timed), timed)
        self.assertIn("timing", v)

    def test_cpu_runnable_cheats_are_rejected_for_the_right_reason(self) -> None:
        with open(os.path.join(HERE, "adversarial", "manifest.json")) as f:
            manifest = json.load(f)
        for entry in manifest["candidates"]:
            if not entry["cpu"]:
                continue
            with self.subTest(entry["file"]):
                task = os.path.join(REPO, entry["task"]) if "relu" in entry["task"] else SMALL
                v = run(task, os.path.join(HERE, "adversarial", entry["file"]))
                self.assertFalse(v["passed"])
                self.assertTrue(set(entry["expect"]) <= set(v["failed_checks"]), (entry["expect"], v["failed_checks"]))

    def test_return_input_is_caught_only_by_the_other_distribution(self) -> None:
        v = run(os.path.join(HERE, "fixtures", "relu_nonneg.py"), os.path.join(HERE, "adversarial", "return_input.py"))
        passed = [t["passed"] for t in v["trials"]]
        self.assertEqual(passed, [True] * 5 + [False])
        self.assertEqual(v["trials"][-1]["distribution"], "randn")

    def source_file(self, text: str) -> str:
        """A temporary .py holding `text`, removed after the test."""
        fd, path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def test_a_program_of_any_rows_is_also_checked_on_fewer_rows(self) -> None:
        task = self.source_file("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2 + 1\n"
                                "def get_inputs():\n    return [torch.randn(16, 8)]\n")
        # PyTorch stands in for the program's kernels, declared as a partial candidate declares them.
        ops = 'STITCH_PYTORCH_OPS = {"aten::mul": 1, "aten::add": 1}\n'
        honest = self.source_file("import torch\n" + ops + "STITCH_ANY_ROWS = True\nclass ModelNew(torch.nn.Module):\n"
                                  "    def forward(self, x):\n        return x * 2 + 1\n")
        v = run(task, honest)
        self.assertTrue(v["passed"], v["findings"])
        self.assertEqual(len(v["trials"]), 7)
        self.assertEqual(v["trials"][-1]["distribution"], "get_inputs, its first 9 of 16 rows")
        # Right only at the batch size the trials give it: caught by the extra batch alone.
        fixed = self.source_file("import torch\n" + ops + "STITCH_ANY_ROWS = True\nclass ModelNew(torch.nn.Module):\n"
                                 "    def forward(self, x):\n        return x * 2 + 1 if x.shape[0] == 16 else x * 2\n")
        v = run(task, fixed)
        self.assertFalse(v["passed"])
        self.assertEqual([t["passed"] for t in v["trials"]], [True] * 6 + [False])
        self.assertIn("output_mismatch", v["failed_checks"])
        # Without the declaration the program is checked at the captured rows only.
        plain = self.source_file("import torch\n" + ops + "class ModelNew(torch.nn.Module):\n"
                                 "    def forward(self, x):\n        return x * 2 + 1 if x.shape[0] == 16 else x * 2\n")
        self.assertEqual(len(run(task, plain)["trials"]), 6)

    def test_degenerate_reference_is_flagged(self) -> None:
        task = self.source_file("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 0\n"
                                "def get_inputs():\n    return [torch.randn(8)]\n")
        cand = self.source_file("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                                "        return torch.zeros_like(x)\n")
        v = run(task, cand)
        self.assertIn("degenerate_reference", [f["name"] for f in v["flags"]])
        # The reference is exactly constant itself: a constant candidate hides nothing.
        self.assertNotIn("constant_output", v["failed_checks"])

    def test_a_constant_where_the_tolerance_cannot_tell_is_caught(self) -> None:
        # Outputs within atol of zero that still vary: zeros pass the tolerance, and are hard-coded.
        task = self.source_file("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x, y):\n"
                                "        return torch.sigmoid(x * y) * 1e-6\n"
                                "def get_inputs():\n    return [torch.randn(64, 128), torch.randn(64, 128)]\n")
        v = run(task, os.path.join(HERE, "adversarial", "constant_output.py"))
        self.assertFalse(v["passed"])
        self.assertEqual(v["failed_checks"], ["constant_output"])

    def test_snapshot_reports_and_restores_patches(self) -> None:
        snap = StateSnapshot.take()
        original_event, original_clock = torch.cuda.Event.elapsed_time, time.perf_counter
        torch.cuda.Event.elapsed_time = lambda self, end: 0.0
        time.perf_counter = lambda: 0.0
        torch.Tensor.__sub__ = lambda a, b: a
        tf32_before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        found = {f.check for f in snap.check_and_restore("in a test", set())}
        expected = {"patched_timer", "patched_torch_function"} | (set() if tf32_before else {"precision_downgrade"})
        self.assertEqual(found, expected)
        self.assertEqual(torch.backends.cuda.matmul.allow_tf32, tf32_before)
        self.assertIs(torch.cuda.Event.elapsed_time, original_event)
        self.assertIs(time.perf_counter, original_clock)
        self.assertNotIn("__sub__", vars(torch.Tensor))
        self.assertEqual(snap.check_and_restore("again", set()), [])


if __name__ == "__main__":
    unittest.main()
