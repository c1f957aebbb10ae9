"""Generates the candidate of every graph fixture and compiles and links each with nvcc exactly
as the harness's fast path does (nvcc_build.Builder's command, cuBLASLt and cuDNN linked where
used), for sm_90; fails naming each candidate that does not generate or compile, with nvcc's
first errors."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness"))
from stitchcuda_harness.nvcc_build import Builder  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True)
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    gen = subprocess.run([args.generator, args.out], capture_output=True, text=True)
    sys.stderr.write(gen.stderr)
    sources = [line for line in gen.stdout.splitlines() if line.endswith(".cu")]

    builder = Builder(args.out, arch="sm_90")
    builder.nvcc = args.nvcc

    def build(src: str) -> tuple[str, int, str]:
        with open(src) as f:
            cmd = builder.command(src, os.path.join(os.path.dirname(src), "libcandidate.so"), f.read())
        p = subprocess.run(cmd, capture_output=True, text=True)
        return src, p.returncode, (p.stdout + p.stderr).strip()

    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for src, rc, log in pool.map(build, sources):
            name = os.path.basename(os.path.dirname(src))
            if rc != 0:
                failed += 1
                print(f"FAIL {name}\n" + "\n".join(log.splitlines()[:20]))
            else:
                print(f"ok   {name}" + (f"  ({log.count('warning')} warning(s))" if "warning" in log else ""))
    print(f"{len(sources)} candidate(s) generated, {failed} failed to compile")
    return 1 if failed or gen.returncode != 0 or not sources else 0


if __name__ == "__main__":
    sys.exit(main())
