"""A newcomer's first commands in a terminal: which Python runs the harness when --python is not given
(the active environment's, else the first on PATH that has torch installed, else one line naming --python),
the command line's mistakes found before the job starts (a missing file, an --out that cannot be
written), errors that name the user's own file rather than the job's copy of it, and help that names
what each command takes. Runs on this CPU machine; needs the host binary in STITCHCUDA_BIN and a Python
with torch in TORCH_PYTHON (CTest passes both)."""
from __future__ import annotations

import os
import subprocess
import tempfile
import unittest

from tests.cli import BIN, REPO

TORCH_PYTHON = os.environ.get("TORCH_PYTHON", "")
MODEL = os.path.join(REPO, "examples", "elementwise_chain.py")


def run(args: list[str], env: dict[str, str], cwd: str = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=600, cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL)


@unittest.skipUnless(BIN and TORCH_PYTHON, "set STITCHCUDA_BIN and TORCH_PYTHON")
class NewcomerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="stitch-newcomer-")
        # A PATH whose only python3 has no torch: a script that fails as `import torch` would.
        self.bin = os.path.join(self.dir, "bin")
        os.makedirs(self.bin)
        with open(os.path.join(self.bin, "python3"), "w") as f:
            f.write("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
        os.chmod(os.path.join(self.bin, "python3"), 0o755)
        self.env = {"PATH": self.bin, "HOME": self.dir, "XDG_STATE_HOME": os.path.join(self.dir, "state")}

    def test_without_a_python_that_has_torch_one_line_names_the_option(self) -> None:
        done = run(["optimize", MODEL, "--out", os.path.join(self.dir, "out")], self.env)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertIn("no Python with PyTorch found", lines[0])
        self.assertIn(os.path.join(self.bin, "python3"), lines[0])
        self.assertIn("--python", lines[0])
        self.assertNotIn("Traceback", done.stdout + done.stderr)

    def test_the_active_virtualenv_runs_the_harness(self) -> None:
        # The environment's python notes that it ran; PATH also holds a python with torch (and the
        # compilers nvcc needs), which the environment's must win over.
        venv, marker = os.path.join(self.dir, "venv"), os.path.join(self.dir, "venv-python-ran")
        os.makedirs(os.path.join(venv, "bin"))
        with open(os.path.join(venv, "bin", "python3"), "w") as f:
            f.write(f"#!/bin/sh\ntouch {marker}\nexec {TORCH_PYTHON} \"$@\"\n")
        os.chmod(os.path.join(venv, "bin", "python3"), 0o755)
        path = ":".join([self.bin, "/usr/local/cuda/bin", os.path.dirname(TORCH_PYTHON), "/usr/bin", "/bin"])
        done = run(["optimize", MODEL, "--out", os.path.join(self.dir, "out"), "--log-level", "warning"],
                   {**self.env, "VIRTUAL_ENV": venv, "PATH": path})
        self.assertIn(done.returncode, (0, 3, 4), done.stdout + done.stderr)  # 4: no GPU to verify on
        self.assertIn("report: ", done.stdout)
        self.assertTrue(os.path.exists(marker), "the virtualenv's python did not run")

    def test_help_says_the_rule(self) -> None:
        done = run(["optimize", "--help"], self.env)
        self.assertEqual(done.returncode, 0)
        self.assertIn("first python3 or python on PATH that has torch installed", " ".join(done.stdout.split()))

    def test_an_out_that_cannot_be_written_is_refused_before_the_job(self) -> None:
        blocker = os.path.join(self.dir, "a-file")
        open(blocker, "w").close()
        done = run(["optimize", MODEL, "--python", TORCH_PYTHON, "--out", os.path.join(blocker, "out")], self.env)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertEqual(done.stdout, "")
        self.assertIn("--out " + os.path.join(blocker, "out"), done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "state")), "a job started")

    def test_a_missing_model_is_a_usage_error_with_the_reason(self) -> None:
        done = run(["optimize", "examples/nope.py"], self.env)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr.strip(), "stitchcuda optimize: cannot read examples/nope.py: no such file")

    def test_an_error_in_the_model_names_the_users_file(self) -> None:
        model = os.path.join(self.dir, "broken.py")
        with open(model, "w") as f:
            f.write("import torch\ndef forward(:\n")
        done = run(["optimize", model, "--python", TORCH_PYTHON, "--out", os.path.join(self.dir, "out")], self.env)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn(model + ":2", done.stdout + done.stderr)
        self.assertNotIn(os.path.join(self.dir, "state"), done.stdout + done.stderr)

    def test_score_help_names_its_judge_not_a_brain(self) -> None:
        done = run(["score", "--help"], self.env)
        self.assertIn("LLM options (--judge)", done.stdout)
        self.assertNotIn("--brain openai|anthropic", done.stdout)


if __name__ == "__main__":
    unittest.main()
