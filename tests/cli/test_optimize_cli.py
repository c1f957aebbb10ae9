"""`stitchcuda optimize`'s command line: --help (exit 0), every option as --name=value, the
protocol's options (--atol, --rtol, --gpu, budgets, the kernels folder), usage errors (exit 2), and
"no GPU" as its own exit code (4) on this CPU machine. Needs the host binary in STITCHCUDA_BIN."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

from tests.cli import BIN, stitchcuda


def optimize(*args: str) -> subprocess.CompletedProcess:
    return stitchcuda("optimize", *args)


@unittest.skipUnless(BIN, "set STITCHCUDA_BIN to the stitchcuda binary")
class OptimizeCliTest(unittest.TestCase):
    def test_help_lists_the_options_and_exits_zero(self) -> None:
        for flag in ("--help", "-h"):
            done = optimize(flag)
            self.assertEqual(done.returncode, 0, done.stderr)
            for option in ("--atol", "--rtol", "--gpu", "--iterations", "--wall-seconds", "--kernels-folder", "--out"):
                self.assertIn(option, done.stdout)

    def test_usage_errors_exit_two_and_say_what_is_wrong(self) -> None:
        cases = {("examples/mlp.py", "--atol=-1"): "--atol takes a number >= 0",
                 ("examples/mlp.py", "--gpu", "first"): "--gpu takes a device index",
                 ("examples/mlp.py", "--kernels-folder=my-kernels"): "Python package name",
                 ("examples/mlp.py", "--iterations=0"): "--iterations takes a positive whole number",
                 ("examples/mlp.py", "--out"): "--out takes a value",
                 ("--json",): "which file?"}
        for args, message in cases.items():
            done = optimize(*args)
            self.assertEqual(done.returncode, 2, args)
            self.assertIn(message, done.stderr, args)

    def test_options_as_name_value_reach_the_job_and_no_gpu_exits_four(self) -> None:
        out = tempfile.mkdtemp(prefix="stitch-cli-")
        done = optimize("examples/elementwise_chain.py", f"--python={sys.executable}", "--log-level=warning",
                        f"--out={out}", "--atol=1e-3", "--rtol=1e-3", "--gpu=0", "--iterations=1", "--wall-seconds=120",
                        "--kernels-folder=fast_ops", "--precision=fp32", "--brain=builtin")
        self.assertEqual(done.returncode, 4, done.stdout + done.stderr)
        self.assertIn("need a GPU", done.stdout)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertTrue(report["finished"]["needsGpu"])
        self.assertTrue(os.path.isfile(os.path.join(out, "fast_ops", "elementwise_chain.cu")))
        with open(os.path.join(out, "elementwise_chain.py")) as f:
            self.assertIn("from fast_ops import load_program", f.read())

    def test_rows_shorter_than_a_vector_chunk_compile(self) -> None:
        # A row of 2 floats held in registers has no 16-byte chunk at VEC 4: its cache keeps one slot
        # (a zero-sized array does not compile; seen on a vision transformer's 2-wide rows).
        out = tempfile.mkdtemp(prefix="stitch-cli-")
        done = optimize("tests/fixtures/tasks/short_rows.py", f"--python={sys.executable}", "--log-level=warning",
                        f"--out={out}", "--iterations=1")
        self.assertEqual(done.returncode, 4, done.stdout + done.stderr)
        self.assertIn("compiled for sm_90", done.stdout)


if __name__ == "__main__":
    unittest.main()
