#!/usr/bin/env python3
"""Runs the built-in optimizer on every task of bench/tasks/ through the real host
(`stitchcuda optimize TASK --json`) and writes a table and a results file: verified fraction,
geometric-mean speedup vs eager and vs torch.compile (chains and the whole set), and the
fraction of the memory-roofline floor each verified kernel reaches.

On the GPU machine, from the repository root:
  python3 bench/run_builtin_suite.py --binary build-gpu/bin/stitchcuda --out OUTDIR [--deadline 420] [--warm 12] [--gpus N]
Tasks run one at a time on each GPU (timings are never taken while another task runs on that GPU); --warm first
compiles every task with torch.compile in parallel processes so that the timed jobs find
inductor's cache warm (compile time is not part of any timing); --deadline stops starting new
tasks after that many seconds and lists the ones not run."""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import io
import json
import math
import os
import queue
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TASKS = os.path.join(ROOT, "bench", "tasks")
CHAINS = {"11_sigmoid_tanh", "12_elementwise_chain", "13_bias_gelu", "14_scale_shift_silu", "15_residual_relu_scale",
          "16_where_leaky", "17_swiglu", "18_div_tanh_sub", "27_rms_norm", "28_softmax_scaled", "29_sum_sq_dim0"}

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


def warm(task: str) -> tuple[str, float, int]:
    t0 = time.time()
    r = subprocess.run([sys.executable, "-c", WARM, task], capture_output=True, text=True, timeout=300)
    return os.path.basename(task), time.time() - t0, r.returncode


def run_task(binary: str, task: str, out: str, python: str, timeout: float, gpu: int | None, ncu_runs: int) -> dict:
    name = os.path.basename(task)[:-3]
    cmd = [binary, "optimize", task, "--json", "--python", python, "--log-level", "warning", "--ncu-runs", str(ncu_runs),
           "--jobs-dir", os.path.join(out, "jobs"), "--out", os.path.join(out, "reports", name)]
    t0 = time.time()
    try:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu)) if gpu is not None else None
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
        lines, rc = p.stdout.splitlines(), p.returncode
    except subprocess.TimeoutExpired as e:
        text = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        lines, rc = text.splitlines(), "timeout"
    result = {"task": name, "exit": rc, "seconds": round(time.time() - t0, 1), "candidates": {}, "roofline": {},
              "log": []}
    for line in lines:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        method, params = msg.get("method"), msg.get("params", {})
        if method == "stitchcuda/candidate":
            c = params["candidate"]
            result["candidates"][c["id"]] = {k: c.get(k) for k in ("title", "status", "speedupEager", "speedupCompile",
                                                                  "failedChecks")}
        elif method == "stitchcuda/log":
            text = params.get("message", "")
            m = re.search(r"^(c\d+) .*\[roofline_fraction=([0-9.]+)\]", text)
            if m:
                result["roofline"][m.group(1)] = float(m.group(2))
            if params.get("level") in ("warning", "error") or params.get("phase") in ("PLAN", "DONE", "VERIFY"):
                result["log"].append(f"[{params.get('phase')}] {text}"[:400])
        elif method == "stitchcuda/jobFinished":
            result["finished"] = {k: params.get(k) for k in ("state", "bestCandidateId", "speedupEager", "message")}
    best = (result.get("finished") or {}).get("bestCandidateId")
    if best and best in result["candidates"]:
        result["best"] = dict(result["candidates"][best], id=best, roofline=result["roofline"].get(best))
    return result


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(results: list[dict], not_run: list[str]) -> tuple[dict, str]:
    verified = [r for r in results if r.get("best")]
    def gm(rows, key):
        return geomean([r["best"].get(key) for r in rows])
    chains = [r for r in verified if r["task"] in CHAINS]
    fractions = sorted(r["best"]["roofline"] for r in verified if r["best"].get("roofline") is not None)
    summary = {
        "tasks": len(results) + len(not_run), "run": len(results), "verified": len(verified),
        "verified_fraction": len(verified) / max(1, len(results) + len(not_run)),
        "geomean_speedup_vs_eager_all": gm(verified, "speedupEager"),
        "geomean_speedup_vs_eager_chains": gm(chains, "speedupEager"),
        "geomean_speedup_vs_compile_all": gm(verified, "speedupCompile"),
        "median_roofline_fraction": fractions[len(fractions) // 2] if fractions else None,
        "not_run": not_run,
    }
    f = lambda v, d=2: "—" if v is None else f"{v:.{d}f}"
    pct = lambda v: "—" if v is None else f"{100 * v:.0f}%"
    rows = ["| task | state | best | vs eager | vs torch.compile | roofline floor reached | candidates (status) |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        b = r.get("best") or {}
        cands = ", ".join(f"{i}:{c['status']}" + (f"({','.join(c['failedChecks'])})" if c.get("failedChecks") else "")
                          for i, c in r["candidates"].items())
        rows.append(f"| {r['task']} | {(r.get('finished') or {}).get('state', r['exit'])} | {b.get('id', '—')} | "
                    f"{f(b.get('speedupEager'))} | {f(b.get('speedupCompile'))} | "
                    f"{pct(b.get('roofline'))} | {cands} |")
    for t in not_run:
        rows.append(f"| {t} | not run (deadline) | — | — | — | — | — |")
    rows += ["", f"verified: {summary['verified']}/{summary['tasks']} ({100 * summary['verified_fraction']:.0f}%)",
             f"geometric-mean speedup vs eager: all {f(summary['geomean_speedup_vs_eager_all'])}x, "
             f"chains {f(summary['geomean_speedup_vs_eager_chains'])}x",
             f"geometric-mean speedup vs torch.compile: {f(summary['geomean_speedup_vs_compile_all'])}x",
             f"median fraction of the memory-roofline floor: "
             f"{pct(summary['median_roofline_fraction'])}"]
    return summary, "\n".join(rows)


def environment(python: str) -> dict:
    probe = ("import torch, json; p = torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None; "
             "print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda, 'gpu': p.name if p else None}))")
    env = json.loads(subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout or "{}")
    try:
        env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        env["driver"] = None
    env["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return env


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "stitchcuda"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default="python3")
    ap.add_argument("--deadline", type=float, default=420.0)
    ap.add_argument("--task-timeout", type=float, default=150.0)
    ap.add_argument("--warm", type=int, default=0, help="parallel torch.compile warm-up processes (0: none)")
    ap.add_argument("--warm-only", action="store_true", help="only the warm-up (run beside the host's build)")
    # Nsight Compute costs 7–10 s a run; the suite measures speedups, so by default it leaves
    # kernel metrics to the trace and the profiling suite checks ncu.
    ap.add_argument("--ncu-runs", type=int, default=0, help="ncu runs per task job (the host's --ncu-runs)")
    ap.add_argument("--gpus", type=int, default=1, help="tasks run side by side, one per GPU")
    ap.add_argument("--work", help="where job folders and per-task reports go (default: OUT)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the results already in OUT/builtin_suite.json and run only the other tasks")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="no run: combine the builtin_suite.json of runs that split the task list")
    ap.add_argument("tasks", nargs="*")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.merge:
        return merge(args.merge, args.out)
    tasks = [os.path.abspath(t) for t in args.tasks] or sorted(
        os.path.join(TASKS, f) for f in os.listdir(TASKS) if f.endswith(".py"))
    start = time.time()
    if args.warm:
        with concurrent.futures.ProcessPoolExecutor(args.warm) as pool:
            for name, secs, rc in pool.map(warm, tasks):
                print(f"warm {name}: {secs:.1f} s (exit {rc})", flush=True)
    if args.warm_only:
        return 0
    work = args.work or args.out
    done, commands = {}, []
    previous = os.path.join(args.out, "builtin_suite.json")
    if args.resume and os.path.exists(previous):
        with open(previous) as f:
            report = json.load(f)
        done = {r["task"]: r for r in report["results"]}
        commands = report.get("commands", [])
        tasks = [t for t in tasks if os.path.basename(t)[:-3] not in done]
        print(f"resuming: {len(done)} task(s) done, {len(tasks)} to run", flush=True)
    results, not_run, finished = [], [], []
    lock = threading.Lock()
    env = environment(args.python)
    command = " ".join(sys.argv)

    def write_quietly(rows: list[dict]) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            write(args.out, env, commands + [command], rows, [])

    free_gpus = queue.Queue()
    for g in range(args.gpus):
        free_gpus.put(g)

    def one(task: str) -> dict | None:
        # A task starts only before the deadline; each runs alone on its GPU, so no timing ever
        # shares a device with another task's.
        if time.time() - start > args.deadline:
            not_run.append(os.path.basename(task)[:-3])
            return None
        gpu = free_gpus.get()
        try:
            r = run_task(args.binary, task, work, args.python, args.task_timeout, gpu if args.gpus > 1 else None,
                         args.ncu_runs)
        finally:
            free_gpus.put(gpu)
        with lock:  # saved after every task, so a run stopped midway resumes where it was
            finished.append(r)
            write_quietly(sorted(list(done.values()) + finished, key=lambda x: x["task"]))
        b = r.get("best") or {}
        print(f"{r['task']}: {(r.get('finished') or {}).get('state', r['exit'])} in {r['seconds']} s, "
              f"best {b.get('id')} eager x{b.get('speedupEager')} compile x{b.get('speedupCompile')} "
              f"roofline {b.get('roofline')}" + (f" (GPU {gpu})" if args.gpus > 1 else ""), flush=True)
        return r

    with concurrent.futures.ThreadPoolExecutor(args.gpus) as pool:
        results = [r for r in pool.map(one, tasks) if r is not None]
    not_run.sort()
    results = sorted(list(done.values()) + results, key=lambda r: r["task"])
    write(args.out, env, commands + [command], results, not_run)
    return 0


def write(out: str, env: dict, commands: list[str], results: list[dict], not_run: list[str]) -> None:
    summary, table = summarize(results, not_run)
    report = {"environment": env, "commands": commands, "summary": summary, "results": results}
    with open(os.path.join(out, "builtin_suite.json"), "w") as f:
        json.dump(report, f, indent=1)
    runs = "\n".join(f"- command: `{c}`" for c in commands)
    with open(os.path.join(out, "builtin_suite.md"), "w") as f:
        f.write(f"# Built-in optimizer suite\n\n- date: {env['date']}\n- GPU: {env.get('gpu')}, driver {env.get('driver')}, "
                f"CUDA {env.get('cuda')}, PyTorch {env.get('torch')}\n{runs}\n\n{table}\n")
    print(table)


def merge(paths: list[str], out: str) -> int:
    """One report from runs on the same kind of GPU that each took part of the task list; a task
    not run in one but run in another counts as run."""
    reports = [json.load(open(p)) for p in paths]
    envs = {(r["environment"].get("gpu"), r["environment"].get("torch")) for r in reports}
    if len(envs) > 1:
        print(f"refusing to merge runs on different GPUs or PyTorch versions: {sorted(envs)}", file=sys.stderr)
        return 2
    results = {r["task"]: r for rep in reports for r in rep["results"]}
    not_run = sorted({t for rep in reports for t in rep["summary"]["not_run"]} - set(results))
    commands = [c for rep in reports for c in rep.get("commands", [rep.get("command", "")])]
    env = dict(reports[-1]["environment"], date=" / ".join(rep["environment"]["date"] for rep in reports))
    write(out, env, commands, [results[t] for t in sorted(results)], not_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
