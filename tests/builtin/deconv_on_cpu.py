"""Builds deconv_on_cpu.cu around a generated candidate that holds the direct transposed-convolution
kernel (the first fixture whose candidate launches it) with nvcc, as a host program, and runs it:
the kernel's block steps on the CPU against a scatter-form reference. Needs nvcc, no GPU."""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness"))
from stitchcuda_harness.nvcc_build import INCLUDE_DIR, library_flags  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True)
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    gen = subprocess.run([args.generator, args.out], capture_output=True, text=True)
    candidates = [p for p in sorted(glob.glob(os.path.join(args.out, "*", "candidate.cu")))
                  if ".tensor_cores" not in p and "sc_deconv_launch<" in open(p).read()]
    if not candidates:
        print("no generated candidate launches the direct transposed-convolution kernel\n" + gen.stderr)
        return 1
    source = candidates[0]
    test = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deconv_on_cpu.cu")
    binary = os.path.join(args.out, "deconv_on_cpu")
    cmd = [args.nvcc, "-O2", "-std=c++17", "-arch=sm_90", "-I", INCLUDE_DIR, f'-DCANDIDATE="{source}"', "-o", binary,
           test, *library_flags(open(source).read(), args.nvcc)]
    build = subprocess.run(cmd, capture_output=True, text=True)
    if build.returncode != 0:
        print(" ".join(cmd) + "\n" + build.stdout + build.stderr)
        return 1
    print(f"kernel from {os.path.relpath(source, args.out)}")
    return subprocess.run([binary]).returncode


if __name__ == "__main__":
    sys.exit(main())
