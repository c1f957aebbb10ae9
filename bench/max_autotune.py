"""The strongest free alternative a user has, beside our candidates: for each task a `stitchcuda bench`
run verified, its best candidate timed side by side with eager PyTorch, torch.compile (default mode) and
torch.compile(mode="max-autotune"), by the harness's own timer (interleaved rounds, L2 flushed, floor
taken off), in one process per task, one task per GPU at a time. The candidate is built and constructed
as the verifier does (seeded construction, KernelBench's contract); its outputs are checked against
eager's at the verifier's fp32 tolerance before it is timed. Writes results.json and results.md.

On the GPU machine, from the repository root, after a bench run into RESULTS:
    python3 bench/max_autotune.py --results RESULTS --tasks TASK_ROOT --out DIR [--gpus 4] [--limit 20]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time
from typing import Any

from kernelbench_exports import candidate_dir, load_results, stop_group  # bench/ is on sys.path
from result_files import write_results

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One task in a fresh interpreter: argv = harness, task file, candidate folder, build cache, seconds for
# max-autotune's compile. Prints one JSON line.
_ONE = r"""
import json, sys, time, torch
sys.path.insert(0, sys.argv[1])
from stitchcuda_harness.candidate_files import resolve_candidate
from stitchcuda_harness.module_loader import load_module
from stitchcuda_harness.nvcc_build import Builder
from stitchcuda_harness.task_loader import load_task
from stitchcuda_harness.timer import Timer, TimerConfig
task, files = load_task(sys.argv[2]), resolve_candidate(sys.argv[3])
build = Builder(sys.argv[4]).build(files.cuda) if files.cuda else None
if build is not None and not build.ok:
    print(json.dumps({"error": "the candidate's build failed"})); sys.exit()
module = load_module(files.python, "candidate", {"__stitch_library__": build.library} if build else None)
dev = torch.device("cuda")
torch.manual_seed(42); init = task.get_init_inputs()
torch.manual_seed(42); ref = task.model_cls(*init).to(dev)
torch.manual_seed(42); cand = module.ModelNew(*init).to(dev)
sets = []
for s in range(3):
    torch.manual_seed(100 + s)
    sets.append([x.to(dev) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()])
out = {}
with torch.no_grad():
    want, got = ref(*sets[0]), cand(*sets[0])
    want = want if isinstance(want, (tuple, list)) else [want]
    got = got if isinstance(got, (tuple, list)) else [got]
    out["max_abs_diff"] = max(float((a.float() - b.float()).abs().max()) for a, b in zip(want, got))
    out["close"] = all(torch.allclose(a, b, atol=1e-4, rtol=1e-4) for a, b in zip(want, got))
    fns = {"eager": ref, "candidate": cand}
    for name, mode in (("compile", None), ("max_autotune", "max-autotune")):
        t0 = time.perf_counter()
        try:
            c = torch.compile(ref, mode=mode) if mode else torch.compile(ref)
            c(*sets[0]); torch.cuda.synchronize()
            fns[name] = c
            out[name + "_compile_s"] = time.perf_counter() - t0
        except Exception as e:
            out[name + "_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    stats = Timer(dev, TimerConfig(iterations=100, max_seconds=1.0)).measure_side_by_side(fns, sets)
out["median_ms"] = {k: v.median_ms for k, v in stats.items()}
print(json.dumps(out))
"""


def run_one(row: dict[str, Any], cand: str, task_file: str, gpu: int, cache: str, timeout: float) -> dict[str, Any]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": str(gpu), "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", _ONE, os.path.join(REPO, "harness"), task_file, cand, cache],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(p)
        p.communicate()
        return {"task": row["task"], "error": f"over the {timeout:.0f} s limit (max-autotune's compile included)"}
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"task": row["task"], "error": f"exit {p.returncode}: {tail}"}
    result = json.loads(lines[-1])
    result.update(task=row["task"], gpu=gpu, seconds=round(time.perf_counter() - start, 1))
    m = result.get("median_ms") or {}
    for base in ("eager", "compile", "max_autotune"):
        if m.get(base) and m.get("candidate"):
            result["vs_" + base] = m[base] / m["candidate"]
    return result


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def markdown(doc: dict[str, Any]) -> str:
    lines = ["# Candidates against torch.compile(mode=\"max-autotune\")", "",
             f"{doc['environment']}; command: `{doc['command']}`", "",
             "| task | vs eager | vs torch.compile | vs max-autotune | max-autotune compile | note |",
             "|---|---|---|---|---|---|"]
    f = lambda v: f"{v:.2f}x" if isinstance(v, (int, float)) else "—"
    for r in doc["rows"]:
        note = r.get("error") or r.get("max_autotune_error") or ("" if r.get("close", True) else
                                                               f"outputs differ from eager by {r['max_abs_diff']:.2e}")
        compile_s = f"{r['max_autotune_compile_s']:.0f} s" if "max_autotune_compile_s" in r else "—"
        lines.append(f"| {r['task']} | {f(r.get('vs_eager'))} | {f(r.get('vs_compile'))} | {f(r.get('vs_max_autotune'))} "
                     f"| {compile_s} | {note} |")
    s = doc["summary"]
    lines += ["", f"Geometric means over the {s['timed']} tasks timed against all three: eager {f(s['vs_eager'])}, "
                  f"torch.compile {f(s['vs_compile'])}, max-autotune {f(s['vs_max_autotune'])}.", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, help="a stitchcuda bench results folder (on this machine)")
    ap.add_argument("--tasks", required=True, help="the task root the bench ran (levelN folders)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--limit", type=int, default=20, help="the most tasks to time, in the results' order")
    ap.add_argument("--timeout", type=float, default=240, help="seconds per task, compiles included")
    args = ap.parse_args()
    doc_in, results_dir = load_results(args.results)
    os.makedirs(args.out, exist_ok=True)
    picked = []
    for row in doc_in["results"]:
        if row.get("verified") and len(picked) < args.limit:
            cand, where = candidate_dir(row, results_dir)
            if cand:
                picked.append((row, cand))
    import torch
    env = f"{torch.cuda.get_device_name(0)}, PyTorch {torch.__version__}, {time.strftime('%Y-%m-%d')}"
    doc: dict[str, Any] = {"environment": env, "command": " ".join(sys.argv), "rows": []}
    cache = os.path.join(args.out, "build-cache")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.gpus) as pool:
        free = list(range(args.gpus))
        pending: dict[Any, int] = {}
        queue = list(picked)
        while queue or pending:
            while queue and free:
                row, cand = queue.pop(0)
                gpu = free.pop(0)
                task_file = os.path.join(args.tasks, row["task"] + ".py")
                pending[pool.submit(run_one, row, cand, task_file, gpu, cache, args.timeout)] = gpu
            done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                free.append(pending.pop(fut))
                doc["rows"].append(fut.result())
                doc["rows"].sort(key=lambda r: r["task"])
                timed = [r for r in doc["rows"] if all(k in r for k in ("vs_eager", "vs_compile", "vs_max_autotune"))]
                doc["summary"] = {"timed": len(timed), **{k: geomean([r[k] for r in timed])
                                                          for k in ("vs_eager", "vs_compile", "vs_max_autotune")}}
                write_results(args.out, doc, markdown(doc))
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
