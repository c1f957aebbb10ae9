"""CPU tests of the profiling layer's harness modules (run with /usr/bin/python3, which has
PyTorch): the worker exposes profileTrace and measureCeilings, profileTrace writes a trace with
the iteration and line ranges the C++ parser needs, measureCeilings refuses a CPU, ncuTarget
names an interpreter and package folder that really start ncu_target, and ncu_target reports a
missing GPU as one JSON error line. The GPU side runs in record_fixtures.sh."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "harness"))

from stitchcuda_harness.errors import HarnessError  # noqa: E402
from stitchcuda_harness.worker import Worker  # noqa: E402

SMALL = os.path.join(ROOT, "tests", "profiling", "fixtures", "tasks", "small_convnet.py")


class ProfileMethodsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.methods = Worker(None).methods

    def test_worker_lists_the_profiling_methods(self) -> None:
        self.assertIn("profileTrace", self.methods)
        self.assertIn("measureCeilings", self.methods)
        self.assertIn("ncuTarget", self.methods)

    def test_ncu_target_facts_start_the_target_module(self) -> None:
        facts = self.methods["ncuTarget"]({})
        self.assertEqual(facts["python"], sys.executable)
        self.assertEqual(facts["nvtxRange"], "stitchcuda.forward")
        env = {**os.environ, "PYTHONPATH": facts["harnessDir"]}
        p = subprocess.run([facts["python"], "-m", facts["module"], "--help"], capture_output=True, text=True,
                           env=env, timeout=120, cwd="/")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--candidate", p.stdout)

    def test_profile_trace_marks_iterations_and_lines(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.json")
            r = self.methods["profileTrace"]({"path": SMALL, "out": out, "iterations": 2, "device": "cpu"})
            self.assertEqual(r["subject"], "reference")
            self.assertEqual(r["iterations"], 2)
            self.assertEqual(r["sourceFile"], os.path.realpath(SMALL))
            with open(out) as f:
                trace = json.load(f)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        names = [e.get("name", "") for e in events]
        self.assertEqual(sorted(n for n in names if n.startswith("stitchcuda.iteration:")),
                         ["stitchcuda.iteration:0", "stitchcuda.iteration:1"])
        lines = {n for n in names if n.startswith("stitchcuda.line:")}
        self.assertEqual(lines, {f"stitchcuda.line:{n}" for n in (15, 16, 17, 18)})

    def test_profile_trace_needs_an_output_path(self) -> None:
        with self.assertRaises(HarnessError) as ctx:
            self.methods["profileTrace"]({"path": SMALL, "device": "cpu"})
        self.assertEqual(ctx.exception.code, "invalid_params")

    def test_measure_ceilings_refuses_a_cpu(self) -> None:
        with self.assertRaises(HarnessError) as ctx:
            self.methods["measureCeilings"]({"device": "cpu"})
        self.assertEqual(ctx.exception.code, "invalid_params")

    def test_ncu_target_without_cuda_prints_one_error_line(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "harness"), "CUDA_VISIBLE_DEVICES": ""}
        p = subprocess.run([sys.executable, "-m", "stitchcuda_harness.ncu_target", "--task", SMALL],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(json.loads(p.stdout.strip().splitlines()[-1])["error"]["code"], "no_cuda")


if __name__ == "__main__":
    unittest.main()
