#!/usr/bin/env python3
"""Compiles every task under a folder with torch.compile in parallel processes, so that the timed
jobs of `stitchcuda bench` find inductor's cache warm (compile time is never part of a timing).
Run it beside the host's build on the GPU machine (bench/run_bench.sh does):
  python3 bench/warm_compile.py bench/tasks [--jobs 12]
Prints one line per task (seconds, exit status) and exits 0 even when some fail: a task that does
not compile here fails again, with its reason, in the bench."""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import time

WARM = r"""
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("task", sys.argv[1]); m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
torch.manual_seed(0)
model = m.Model(*m.get_init_inputs()).cuda().eval()
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
with torch.no_grad():
    torch.compile(model)(*inputs)
torch.cuda.synchronize()
"""


def tasks_under(path: str) -> list[str]:
    if os.path.isfile(path):
        return [os.path.abspath(path)]
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        found += [os.path.join(root, f) for f in files if f.endswith(".py") and not f.startswith("__")]
    return sorted(os.path.abspath(f) for f in found)


def warm(task: str, python: str, timeout: float) -> tuple[str, float, str]:
    t0 = time.time()
    try:
        r = subprocess.run([python, "-c", WARM, task], capture_output=True, text=True, timeout=timeout)
        status = f"exit {r.returncode}"
    except subprocess.TimeoutExpired:
        status = f"timed out after {timeout:.0f} s"
    return task, time.time() - t0, status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "tasks"))
    ap.add_argument("--jobs", type=int, default=12, help="parallel compile processes")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--timeout", type=float, default=300.0, help="per task, seconds")
    args = ap.parse_args()
    tasks = tasks_under(args.path)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for task, secs, status in pool.map(lambda t: warm(t, args.python, args.timeout), tasks):
            print(f"warm {os.path.relpath(task)}: {secs:.1f} s ({status})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
