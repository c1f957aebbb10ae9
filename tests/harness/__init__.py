"""Harness tests. CPU tests run in CI with `/usr/bin/python3 -m unittest discover -s tests/harness -t .`
(Debian's python3-torch); gpu_suite.sh runs the GPU suite on the GPU machine."""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS = os.path.join(REPO, "harness")
if HARNESS not in sys.path:
    sys.path.insert(0, HARNESS)
