"""What one correctness trial of the verifier costs at KernelBench's largest sizes, step by step:
drawing the inputs, keeping a copy on the CPU (pageable, as `Verifier._keep` does) and bringing it
back, cloning on the device, the sliced comparison, the output summary, and the NaN poisoning.
Prints one line per step (seconds, GB/s where a copy) for a [4096, 393216] float32 tensor (6.4 GB).
    python3 bench/verify_costs.py [--rows 4096 --cols 393216]"""
from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from stitchcuda_harness.tolerance import compare, summary  # noqa: E402
from stitchcuda_harness.trial_inputs import poison_allocator, poison_tensors  # noqa: E402


def timed(label: str, fn, nbytes: int = 0):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    rate = f"  {nbytes / dt / 1e9:6.1f} GB/s" if nbytes else ""
    print(f"{label:<44} {dt:8.3f} s{rate}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=393216)
    a = ap.parse_args()
    dev = torch.device("cuda")
    n = a.rows * a.cols * 4
    print(f"{torch.cuda.get_device_name(dev)}, PyTorch {torch.__version__}, tensor {a.rows}x{a.cols} fp32 = {n / 1e9:.2f} GB")
    torch.manual_seed(0)
    x = timed("draw inputs (torch.rand on the device)", lambda: torch.rand(a.rows, a.cols, device=dev))
    kept = timed("keep on the CPU (pageable .to(cpu))", lambda: x.to("cpu", copy=True), n)
    timed("bring back (pageable .to(cuda))", lambda: kept.to(dev, copy=True), n)
    pinned = timed("pinned host buffer (allocation)", lambda: torch.empty(x.shape, dtype=x.dtype, pin_memory=True))
    timed("keep on the CPU (pinned copy_)", lambda: pinned.copy_(x), n)
    timed("bring back (pinned .to(cuda))", lambda: pinned.to(dev, copy=True), n)
    pinned = kept = None  # freed before the device clone
    y = timed("clone on the device", lambda: x.clone(), 2 * n)
    z = torch.relu(x)
    timed("compare (sliced, fp64)", lambda: compare(z, y))
    timed("summary (sliced, fp64)", lambda: summary(z))
    timed("poison_allocator (one output)", lambda: poison_allocator([(list(x.shape), x.dtype)], dev))
    timed("poison_tensors (one output)", lambda: poison_tensors([y]))


if __name__ == "__main__":
    main()
