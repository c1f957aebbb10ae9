"""Verify turnaround benchmark (issue 3): one fast-path candidate of an elementwise-fusion task
(examples/elementwise_chain.py) verified through the worker as the host drives it — nvcc build
(cache defeated each repetition), correctness trials and guards, timing — with the baselines
already cached; printed beside the load_inline build time of the same candidate's KernelBench
export. Writes verify_turnaround.json and verify_turnaround.md into --out.

Run on the GPU machine from the repository root: python3 bench/verify_turnaround.py --out DIR
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "harness"))
from worker_client import WorkerClient  # noqa: E402

TASK = os.path.join(REPO, "examples", "elementwise_chain.py")
CANDIDATE = os.path.join(REPO, "tests", "harness", "honest", "elementwise_chain")


def fresh_copy(root: str, rep: int) -> str:
    """The candidate with a comment that changes its content hash, so nvcc really builds."""
    d = os.path.join(root, f"candidate_{rep}")
    shutil.copytree(CANDIDATE, d)
    with open(os.path.join(d, "candidate.cu"), "a") as f:
        f.write(f"\n// benchmark repetition {rep} {time.time_ns()}\n")
    return d


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="stitch-bench-")
    cache = os.path.join(work, "cache")
    client = WorkerClient()
    hello = client.request("hello")["result"]
    t0 = time.perf_counter()
    base = client.request("baseline", {"path": TASK, "cacheDir": cache}, deadline_s=600)
    baseline_s = time.perf_counter() - t0
    if "error" in base:
        print("baseline failed:", base["error"])
        return 1
    runs: list[dict[str, Any]] = []
    for rep in range(args.reps):
        cand = fresh_copy(work, rep)
        t0 = time.perf_counter()
        reply = client.request("verify", {"reference": TASK, "candidate": cand, "cacheDir": cache}, deadline_s=300)
        wall = time.perf_counter() - t0
        v = reply.get("result") or {}
        runs.append({"rep": rep, "wall_s": wall, "passed": v.get("passed"), "failed_checks": v.get("failed_checks"),
                     "error": reply.get("error"), "stages_s": v.get("durations_s"),
                     "build_cached": (v.get("build") or {}).get("cached"),
                     "candidate_ms": ((v.get("timing") or {}).get("candidate") or {}).get("median_ms"),
                     "speedup_vs_eager": (v.get("timing") or {}).get("speedup_vs_eager"),
                     "speedup_vs_compile": (v.get("timing") or {}).get("speedup_vs_compile"),
                     "baseline_cached": (v.get("timing") or {}).get("baseline_cached")})
    export_path = os.path.join(work, "elementwise_chain_kernelbench.py")
    t0 = time.perf_counter()
    exp = client.request("exportKernelBench", {"candidate": CANDIDATE, "out": export_path, "reference": TASK,
                                                "check": True, "cacheDir": cache}, deadline_s=600)
    export_s = time.perf_counter() - t0
    client.close()
    walls = [r["wall_s"] for r in runs]
    check = (exp.get("result") or {}).get("check") or {}
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "hello": hello, "task": os.path.relpath(TASK, REPO), "candidate": os.path.relpath(CANDIDATE, REPO),
        "command": "python3 bench/verify_turnaround.py --out DIR --reps %d" % args.reps,
        "baseline_first_call_s": baseline_s, "baseline": base.get("result"),
        "verify_runs": runs, "verify_median_s": statistics.median(walls), "verify_min_s": min(walls), "verify_max_s": max(walls),
        "all_passed": all(r["passed"] for r in runs),
        "load_inline_build_s": check.get("loadInlineSeconds"), "export_call_s": export_s,
        "export_same_outputs": check.get("same"), "export_check": check, "export_error": exp.get("error"),
    }
    with open(os.path.join(args.out, "verify_turnaround.json"), "w") as f:
        json.dump(result, f, indent=1, default=str)
    lines = [
        "# Verify turnaround, elementwise fusion (examples/elementwise_chain.py)", "",
        f"{result['date']}: GPU {hello.get('gpu')}, driver {hello.get('driver')}, torch {hello.get('torch')} (CUDA {hello.get('torchCuda')}), python {hello.get('python')}",
        f"command: {result['command']}", "",
        "| rep | verify wall (s) | build (s) | correctness (s) | guards+trace (s) | timing (s) | passed | candidate ms | speedup vs eager | vs compile |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        s = r["stages_s"] or {}
        fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
        lines.append(f"| {r['rep']} | {r['wall_s']:.2f} | {fmt(s.get('build'))} | {fmt(s.get('correctness'))} | "
                     f"{fmt(s.get('compute_and_streams'))} | {fmt(s.get('timing'))} | {r['passed']} | {fmt(r['candidate_ms'])} | "
                     f"{fmt(r['speedup_vs_eager'])} | {fmt(r['speedup_vs_compile'])} |")
    lines += ["", f"verify turnaround median {result['verify_median_s']:.2f} s (min {result['verify_min_s']:.2f}, max {result['verify_max_s']:.2f}); target < 5 s",
              f"load_inline build of the same candidate (KernelBench export): {result['load_inline_build_s']} s; export gives the same outputs: {result['export_same_outputs']}",
              f"baselines (eager + torch.compile), first call, then cached: {baseline_s:.1f} s"]
    with open(os.path.join(args.out, "verify_turnaround.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)
    return 0 if result["all_passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
