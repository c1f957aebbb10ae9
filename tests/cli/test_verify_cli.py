"""`stitchcuda verify`'s command line: --help (exit 0) and options as --name=value, on this CPU
machine (a fast-path candidate there says it needs a GPU: exit 4). Needs STITCHCUDA_BIN."""
from __future__ import annotations

import json
import subprocess
import sys
import unittest

from tests.cli import BIN, stitchcuda


def verify(*args: str) -> subprocess.CompletedProcess:
    return stitchcuda("verify", *args)


@unittest.skipUnless(BIN, "set STITCHCUDA_BIN to the stitchcuda binary")
class VerifyCliTest(unittest.TestCase):
    def test_help_lists_the_options_and_exits_zero(self) -> None:
        done = verify("--help")
        self.assertEqual(done.returncode, 0, done.stderr)
        for option in ("--reference", "--candidate", "--atol", "--rtol", "--trials", "--no-timing", "--kernelbench"):
            self.assertIn(option, done.stdout)

    def test_options_as_name_value(self) -> None:
        done = verify(f"--python={sys.executable}", "--log-level=warning", "--reference=tests/harness/fixtures/small_elementwise.py",
                      "--candidate=tests/harness/honest/elementwise_chain", "--atol=1e-3", "--rtol=1e-3", "--trials=2",
                      "--no-timing", "--json")
        self.assertEqual(done.returncode, 4, done.stdout + done.stderr)
        verdict = json.loads(done.stdout)
        self.assertEqual(verdict["status"], "needs_gpu")
        self.assertEqual(verdict["tolerance"]["overrides"], {"atol": 0.001, "rtol": 0.001})

    def test_a_bad_value_is_a_usage_error(self) -> None:
        done = verify("--reference=a.py", "--candidate=b", "--atol=lots")
        self.assertEqual(done.returncode, 2)
        self.assertIn("--atol takes a number, not lots", done.stderr)


if __name__ == "__main__":
    unittest.main()
