"""`stitchcuda optimize` on model files a careless user or anyone else may hand it (issue 34): a binary or
non-UTF-8 file is "not a Python source file", naming it; a model whose __init__ sleeps or whose forward never
returns stops at --load-timeout with the stage and the model's line; CPU memory running out is named as such;
a forward written on one line gets its candidate; a second run on the same --out is refused while the first
writes there. Runs on this CPU machine; needs the host binary in STITCHCUDA_BIN."""
from __future__ import annotations

import os
import py_compile
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from tests.cli import BIN, REPO, stitchcuda

SLEEPING_INIT = """
    import time
    import torch
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            time.sleep(3600)
        def forward(self, x):
            return x + 1
    def get_inputs():
        return [torch.ones(4)]
"""
ENDLESS_FORWARD = """
    import torch
    class Model(torch.nn.Module):
        def forward(self, x):
            while True:
                x = x + 0
    def get_inputs():
        return [torch.ones(4)]
"""
HUGE_INPUT = """
    import torch
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + 1
    def get_inputs():
        return [torch.randn(1 << 46)]  # 256 TiB: no machine has it, as 20 GB under a memory limit
"""
ONE_LINE_FORWARD = """
    import torch
    class Model(torch.nn.Module):
        def forward(self, x, y): return torch.relu(x * y + 0.5) * torch.sigmoid(x)
    def get_inputs():
        return [torch.randn(64, 128), torch.randn(64, 128)]
"""


@unittest.skipUnless(BIN, "set STITCHCUDA_BIN to the stitchcuda binary")
class BadModelTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="stitch-bad-model-")

    def model(self, text: str | bytes, name: str = "model.py") -> str:
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else textwrap.dedent(text).lstrip().encode())
        return path

    def optimize(self, path: str, *args: str) -> subprocess.CompletedProcess:
        return stitchcuda("optimize", path, f"--python={sys.executable}", "--log-level=warning",
                          f"--jobs-dir={self.dir}/jobs", f"--out={self.dir}/out", *args)

    def assertNamedFailure(self, done: subprocess.CompletedProcess, *expected: str) -> None:
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 1, out)
        for text in expected:
            self.assertIn(text, out)
        self.assertNotIn("Traceback", out)
        self.assertNotIn("internal_error", out)

    def test_a_binary_file_is_not_a_python_source_file(self) -> None:
        path = self.model(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), "weights.py")
        self.assertNamedFailure(self.optimize(path), "weights.py is not a Python source file", "[not_python_source]")

    def test_a_file_not_in_utf8_is_not_a_python_source_file(self) -> None:
        path = self.model(b"import torch\n# caf\xe9\n")
        self.assertNamedFailure(self.optimize(path), "model.py is not a Python source file",
                                "byte 0xe9 (line 2) is not utf-8 text")

    def test_an_init_that_sleeps_stops_at_the_load_timeout_naming_its_line(self) -> None:
        start = time.monotonic()
        done = self.optimize(self.model(SLEEPING_INIT), "--load-timeout=2")
        self.assertNamedFailure(done, "model.py:6: Model.__init__ did not finish within 2 s", "time.sleep(3600)",
                                "[stage_timeout]")
        self.assertLess(time.monotonic() - start, 120)

    def test_a_forward_that_never_returns_stops_at_the_load_timeout_naming_its_line(self) -> None:
        done = self.optimize(self.model(ENDLESS_FORWARD), "--load-timeout=2")
        self.assertNamedFailure(done, "model.py:5: the first Model.forward did not finish within 2 s", "[stage_timeout]")

    def test_cpu_memory_running_out_is_named_as_cpu_memory(self) -> None:
        done = self.optimize(self.model(HUGE_INPUT))
        self.assertNamedFailure(done, "model.py:6: ", "out of CPU memory", "[cpu_out_of_memory]")
        self.assertNotIn("cuda_out_of_memory", done.stdout + done.stderr)

    def test_a_one_line_forward_gets_a_candidate_whose_edit_is_python(self) -> None:
        done = self.optimize(self.model(ONE_LINE_FORWARD), "--iterations=1")
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 4, out)  # built, and no GPU to verify it on
        self.assertNotIn("has no body", out)
        edited = os.path.join(self.dir, "out", "model.py")
        py_compile.compile(edited, doraise=True)  # the def line the edit replaced is whole again
        with open(edited) as f:
            text = f.read()
        self.assertIn("    def forward(self, x, y):\n", text)
        self.assertIn("        # StitchCUDA: 1 step(s) compiled into stitchcuda_kernels/model.cu", text)
        self.assertIn("        return torch.relu(x * y + 0.5) * torch.sigmoid(x)\n", text)

    def test_a_second_run_on_the_same_out_is_refused_while_the_first_writes_there(self) -> None:
        first = subprocess.Popen([BIN, "optimize", self.model(SLEEPING_INIT), f"--python={sys.executable}",
                                  "--log-level=warning", f"--jobs-dir={self.dir}/jobs", f"--out={self.dir}/out",
                                  "--load-timeout=60"], cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            lock = os.path.join(self.dir, "out", ".stitchcuda-optimize.lock")
            deadline = time.monotonic() + 60
            while not (os.path.isfile(lock) and os.path.getsize(lock)) and time.monotonic() < deadline:
                time.sleep(0.1)
            second = self.optimize(self.model(ONE_LINE_FORWARD, "other.py"))
            self.assertEqual(second.returncode, 1, second.stdout + second.stderr)
            self.assertIn(f"--out {self.dir}/out: another stitchcuda optimize (pid {first.pid}) is writing its report "
                          "there", second.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.dir, "out", "report.md")))
        finally:
            first.send_signal(signal.SIGTERM)  # it cancels its job, writes its report and ends
            first.communicate(timeout=120)
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "out", "report.md")))
        # Once the first has ended, the folder is free again.
        again = self.optimize(self.model(b"\xff\xfe", "third.py"))
        self.assertIn("third.py is not a Python source file", again.stdout + again.stderr)


if __name__ == "__main__":
    unittest.main()
