"""Measures this GPU's roofline ceilings as a job does (harness measureCeilings) and prints them,
with which memory stream set the bandwidth and both FP32 GEMM rates (PyTorch's, our search's).
The GEMM program is the one the host sends: `build/bin/write_gemm_ceiling FILE` writes it.
    python3 bench/ceilings.py --gemm-program gemm_ceiling.cu --out results.json"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))

import torch  # noqa: E402

from stitchcuda_harness.profile_ceilings import measure_ceilings  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemm-program", help="the .cu whose stitch_gemm_ceiling is timed (write_gemm_ceiling)")
    ap.add_argument("--out", help="also write the result here")
    args = ap.parse_args()
    params = {}
    if args.gemm_program:
        with open(args.gemm_program, encoding="utf-8") as f:
            params["gemmProgram"] = f.read()
    t0 = time.perf_counter()
    result = measure_ceilings(torch.device("cuda"), params)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
