"""The host's command line, run as a user runs it: the binary in STITCHCUDA_BIN, from the repository root."""
from __future__ import annotations

import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("STITCHCUDA_BIN", "")


def stitchcuda(command: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, command, *args], capture_output=True, text=True, timeout=600, cwd=REPO,
                          stdin=subprocess.DEVNULL)
