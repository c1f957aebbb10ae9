"""Verification at KernelBench scale (issue 20): the largest problems of a KernelBench folder through
`stitchcuda optimize` (one candidate), then `stitchcuda verify --json` on the candidate it kept, timed end
to end; per problem the verifier's seconds and peak GPU memory per stage (its verdict's `durations_s` and
`peak_memory_bytes`). Writes results.json and results.md into --out after every problem, so a call stopped
at its limit still leaves what it measured.

Which problems: the task files named on the command line, or else the --largest (10) problems of --root by
input bytes (sized by running get_inputs() with every factory on the meta device: nothing is allocated),
plus the level-1 problems whose names match an --also pattern (GELU, Softmax, RMSNorm by default) with
inputs of at least --also-min-gb; those run first, because they are the issue's ≤ 60 s targets.

Every child (optimize, verify) runs under a timeout that keeps the whole call inside --budget seconds; a
problem that fails, times out or no longer fits is a row that says so. A killed host leaves its harness
worker behind (its own process group): this process adopts orphans (PR_SET_CHILD_SUBREAPER) and stops the
groups it adopted, as `stitchcuda bench` does, so the next problem is not measured beside a stray worker.

On the GPU machine, from the repository root, after building the host into build-gpu:
    python3 bench/large_problems.py --root .kb --out DIR [--work DIR] [--budget 560] [TASK.py ...]
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from typing import Any, Optional

from result_files import write_results  # bench/ is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GB = 1e9
# The verdict's stages in the order the verifier runs them (HARNESS.md, verify); ground_truth is the part of
# correctness spent on the fp64 truth, so it is shown inside correctness, not added to the total.
STAGES = ["static_guards", "build", "baseline", "load", "correctness", "buffers", "buffer_reuse",
          "compute_and_streams", "timing"]
PR_SET_CHILD_SUBREAPER = 36


# ---- sizing (runs in a child interpreter: the harness's Python, with torch) -------------------------

_SCAN = r"""
import glob, json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "harness"))
import torch
from torch.overrides import TorchFunctionMode
from stitchcuda_harness.task_loader import load_task
from stitchcuda_harness.environment_info import hello

# Factories without a device (or with the CPU's) allocate on the meta device, so a 17 GB input costs
# nothing to size. torch.device("meta") as a context does this on torch >= 2.0; the mode covers 1.13.
FACTORIES = {torch.rand, torch.randn, torch.randint, torch.zeros, torch.ones, torch.empty, torch.full,
             torch.arange, torch.tensor, torch.randperm, torch.eye, torch.linspace, torch.rand_like,
             torch.randn_like, torch.randint_like, torch.zeros_like, torch.ones_like, torch.empty_like}
class OnMeta(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in FACTORIES and str(kwargs.get("device") or "cpu").startswith("cpu"):
            kwargs["device"] = "meta"
        return func(*args, **kwargs)

def nbytes(v):
    if isinstance(v, torch.Tensor):
        return v.numel() * v.element_size()
    if isinstance(v, (list, tuple)):
        return sum(nbytes(x) for x in v)
    if isinstance(v, dict):
        return sum(nbytes(x) for x in v.values())
    return 0

rows = []
for path in json.loads(sys.argv[2]):
    try:
        task = load_task(path)
        with OnMeta():
            rows.append({"file": path, "input_bytes": nbytes(task.get_inputs())})
    except BaseException as exc:  # a task that cannot be sized is reported, not fatal
        rows.append({"file": path, "input_bytes": None, "error": (type(exc).__name__ + ": " + str(exc))[:300]})
print(json.dumps({"hello": hello(), "tasks": rows}))
"""


def scan(python: str, files: list[str], timeout: float) -> dict[str, Any]:
    out = subprocess.run([python, "-c", _SCAN, REPO, json.dumps(files)], capture_output=True, text=True,
                         timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"sizing the tasks failed (exit {out.returncode}): {out.stderr.strip()[-800:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def task_key(path: str) -> str:
    return os.path.basename(os.path.dirname(path)) + "/" + os.path.splitext(os.path.basename(path))[0]


def select(sized: list[dict[str, Any]], largest: int, also: list[str], also_min_bytes: float) -> list[dict[str, Any]]:
    """The --also problems first (level 1, large enough; in the patterns' order, the largest first within
    one), then the largest by input bytes."""
    known = [r for r in sized if r.get("input_bytes") is not None]
    picked: list[dict[str, Any]] = []
    chosen: set[str] = set()
    for pattern in also:
        rx = re.compile(pattern, re.IGNORECASE)
        for r in sorted(known, key=lambda r: (-r["input_bytes"], task_key(r["file"]))):
            name = os.path.splitext(os.path.basename(r["file"]))[0]
            if (r["file"] not in chosen and task_key(r["file"]).startswith("level1/") and rx.search(name)
                    and r["input_bytes"] >= also_min_bytes):
                picked.append(dict(r, selected_by="--also " + pattern))
                chosen.add(r["file"])
    for r in sorted(known, key=lambda r: (-r["input_bytes"], task_key(r["file"])))[:largest]:
        if r["file"] not in chosen:
            picked.append(dict(r, selected_by=f"{largest} largest"))
    return picked


# ---- children ---------------------------------------------------------------------------------------

def stop_adopted_group_leaders() -> int:
    """Orphans this process adopted that lead their own group (a killed host's harness worker): stopped
    with their group, as server/ChildProcess.cpp stopAdoptedGroupLeaders does."""
    me, own = os.getpid(), os.getpgrp()
    stopped = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        ppid, pgrp, pid = int(fields[1]), int(fields[2]), int(name)
        if ppid == me and pgrp == pid and pgrp != own:
            try:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                stopped += 1
            except (ProcessLookupError, ChildProcessError):
                pass
    return stopped


def run_child(argv: list[str], timeout: float, log_path: str) -> dict[str, Any]:
    """argv under a wall-clock limit, its own process group (killed whole at the limit); stdout returned,
    stderr to log_path."""
    t0 = time.perf_counter()
    with open(log_path, "w") as err:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True, cwd=REPO)
        timed_out = False
        try:
            stdout, _ = p.communicate(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            stdout, _ = p.communicate()
    wall = time.perf_counter() - t0
    stopped = stop_adopted_group_leaders()
    return {"argv": argv, "exit": p.returncode, "timed_out": timed_out, "seconds": round(wall, 2),
            "stdout": stdout, "stopped_leftovers": stopped}


def tail(path: str, n: int = 6) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = [l.rstrip() for l in f if l.strip()]
        return " | ".join(lines[-n:])[-600:]
    except OSError:
        return ""


# ---- one problem --------------------------------------------------------------------------------------

def pick_candidate(report: dict[str, Any]) -> tuple[Optional[str], Optional[str], str]:
    """(job dir, candidate id, why this one) from optimize's report.json: the best verified candidate, or
    else the last one written (its verdict at this scale is still what the verifier is measured on)."""
    log_path = (report.get("job") or {}).get("logPath") or ""
    job_dir = os.path.dirname(log_path) if log_path else None
    best = (report.get("finished") or {}).get("bestCandidateId") or (report.get("job") or {}).get("bestCandidateId")
    if best:
        return job_dir, best, "optimize's best verified candidate"
    cands = report.get("candidates") or []
    for c in reversed(cands):
        if job_dir and os.path.isdir(os.path.join(job_dir, "candidates", c.get("id", ""))):
            checks = ", ".join(c.get("failedChecks") or []) or c.get("status", "?")
            return job_dir, c["id"], f"no verified candidate; optimize's {c['id']} ({checks})"
    return job_dir, None, "optimize wrote no candidate"


def verdict_summary(v: dict[str, Any]) -> dict[str, Any]:
    peaks = {k: int(b) for k, b in (v.get("peak_memory_bytes") or {}).items()}
    timing = v.get("timing") or {}
    truth_skips = sorted({o.get("truth_skipped") for t in v.get("trials") or [] for o in t.get("outputs") or []
                          if o.get("truth_skipped")})
    return {
        "status": v.get("status"), "passed": v.get("passed"), "rule": v.get("correctness_rule"),
        "kernelbench_strict": v.get("kernelbench_strict"), "failed_checks": v.get("failed_checks"),
        "findings": [{"check": f.get("check"), "message": (f.get("message") or "")[:400], "data": f.get("data")}
                     for f in v.get("findings") or []],
        "skipped_checks": v.get("skipped_checks"), "flags": v.get("flags"),
        "durations_s": v.get("durations_s"), "peak_memory_bytes": peaks,
        "peak_bytes": max(peaks.values()) if peaks else None,
        "memory": v.get("memory"), "ground_truth": v.get("ground_truth"), "truth_skipped": truth_skips,
        "trials": len(v.get("trials") or []), "tolerance": v.get("tolerance"),
        "speedup_vs_eager": timing.get("speedup_vs_eager"), "speedup_vs_compile": timing.get("speedup_vs_compile"),
        "candidate_ms": (timing.get("candidate") or {}).get("median_ms"),
        "eager_ms": (timing.get("eager") or {}).get("median_ms"), "input_sets": timing.get("input_sets"),
        "baseline_cached": timing.get("baseline_cached"),
    }


def with_why(out: dict[str, Any]) -> dict[str, Any]:
    """Sets out["why"] from a verdict that did not pass: its status and first finding."""
    if out["verify"]["status"] != "passed":
        f = (out["verify"]["findings"] or [{}])[0]
        status, check = out["verify"]["status"], f.get("check")
        out["why"] = (f"{status}: " if status != check else "") + f"{check}: {f.get('message', '')[:300]}"
    return out


def from_optimize_verdict(out: dict[str, Any], cand_dir: str) -> dict[str, Any]:
    """The stages of the verdict optimize's own verifier wrote for the candidate (verdict.json in its folder):
    the same verifier, run once instead of twice, so a call's minutes hold twice the problems. The verify
    columns then have no end-to-end wall time of a fresh process."""
    try:
        with open(os.path.join(cand_dir, "verdict.json")) as f:
            verdict = json.load(f)
    except (OSError, ValueError) as exc:
        out["why"] = f"optimize kept no readable verdict for {os.path.basename(cand_dir)}: {exc}"
        return out
    out["verify"] = {"wall_s": None, "source": "optimize's verdict.json"}
    out["verify"].update(verdict_summary(verdict))
    return with_why(out)


def run_problem(args: argparse.Namespace, host: list[str], row: dict[str, Any], deadline: float) -> dict[str, Any]:
    key = task_key(row["file"])
    slug = key.replace("/", "__")
    out = dict(task=key, file=row["file"], input_bytes=row["input_bytes"], input_gb=round(row["input_bytes"] / GB, 3),
               selected_by=row["selected_by"], optimize=None, candidate=None, verify=None, why=None)
    report_dir = os.path.join(args.work, "reports", slug)
    logs = os.path.join(args.work, "logs")
    os.makedirs(logs, exist_ok=True)

    left = deadline - time.monotonic()
    opt_limit = min(args.optimize_timeout, left - args.verify_reserve)
    if opt_limit < 20:
        out["why"] = f"not run: {left:.0f} s left of the budget"
        return out
    print(f"[{key}] optimize (limit {opt_limit:.0f} s)", flush=True)
    o = run_child(host + ["optimize", row["file"], "--iterations", str(args.iterations), "--wall-seconds",
                          str(args.wall_seconds), "--out", report_dir] + args.host_args,
                  opt_limit, os.path.join(logs, slug + ".optimize.log"))
    report: dict[str, Any] = {}
    try:
        with open(os.path.join(report_dir, "report.json")) as f:
            report = json.load(f)
    except (OSError, ValueError):
        pass
    fin = report.get("finished") or {}
    out["optimize"] = {"seconds": o["seconds"], "exit": o["exit"], "timed_out": o["timed_out"],
                       "state": fin.get("state"), "message": fin.get("message"),
                       "candidates": [{k: c.get(k) for k in ("id", "status", "failedChecks", "speedupEager")}
                                      for c in report.get("candidates") or []],
                       "stopped_leftovers": o["stopped_leftovers"]}
    if o["timed_out"]:
        out["optimize"]["log_tail"] = tail(os.path.join(logs, slug + ".optimize.log"))
        out["why"] = f"optimize timed out after {o['seconds']:.0f} s and was killed"
        return out
    if not report:
        out["optimize"]["log_tail"] = tail(os.path.join(logs, slug + ".optimize.log"))
        out["why"] = f"optimize exited {o['exit']} without a report.json"
        return out
    job_dir, cid, why = pick_candidate(report)
    out["candidate"] = {"id": cid, "job_dir": job_dir, "why": why}
    if not cid or not job_dir:
        out["why"] = f"{why}: {fin.get('message', '')}"[:400]
        return out
    cand_dir = os.path.join(job_dir, "candidates", cid)
    if args.verdict_from_optimize:
        return from_optimize_verdict(out, cand_dir)

    left = deadline - time.monotonic()
    ver_limit = min(args.verify_timeout, left)
    if ver_limit < 20:
        out["why"] = f"verify not run: {left:.0f} s left of the budget"
        return out
    print(f"[{key}] verify {cid} (limit {ver_limit:.0f} s)", flush=True)
    v = run_child(host + ["verify", "--reference", row["file"], "--candidate", cand_dir, "--json"] + args.host_args,
                  ver_limit, os.path.join(logs, slug + ".verify.log"))
    out["verify"] = {"wall_s": v["seconds"], "exit": v["exit"], "timed_out": v["timed_out"],
                     "stopped_leftovers": v["stopped_leftovers"]}
    if v["timed_out"]:
        out["verify"]["log_tail"] = tail(os.path.join(logs, slug + ".verify.log"))
        out["why"] = f"verify timed out after {v['seconds']:.0f} s and was killed"
        return out
    try:
        reply = json.loads(v["stdout"])
    except ValueError:
        out["verify"]["log_tail"] = tail(os.path.join(logs, slug + ".verify.log"))
        out["why"] = f"verify exited {v['exit']} without a JSON verdict"
        return out
    if "error" in reply and "status" not in reply:
        e = reply["error"] or {}
        out["verify"]["error"] = e
        out["why"] = f"verify's harness call failed: {e.get('code')}: {(e.get('message') or '')[:300]}"
        return out
    out["verify"].update(verdict_summary(reply))
    return with_why(out)


# ---- files --------------------------------------------------------------------------------------------

def fmt(x: Any, digits: int = 1) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def markdown(doc: dict[str, Any]) -> str:
    env = doc["environment"]
    lines = [
        "# Verification at KernelBench scale: the largest problems",
        "",
        f"- date: {doc['date']}",
        f"- GPU: {env.get('gpu')} ({fmt((env.get('memoryBytes') or 0) / GB, 1)} GB), driver {env.get('driver')}, "
        f"CUDA {env.get('torchCuda')} (PyTorch's build), PyTorch {env.get('torch')}, Python {env.get('python')}",
        f"- command: `{doc['command']}`",
        f"- per problem: `{doc['optimize_command']}`, then `{doc['verify_command']}` timed end to end "
        f"(a fresh process; the verifier's baseline cache is its own, so `baseline` is eager and torch.compile timed anew)",
        f"- selection: {doc['selection']}",
        "",
        "Seconds per stage are the verdict's `durations_s`; `truth` is the part of `correctness` spent on the fp64 "
        "ground truth; `checks` is buffer_reuse + compute_and_streams. Peak GB is the CUDA allocator's peak per stage "
        "(`peak_memory_bytes`, reset at each stage's start).",
        "",
        "| problem | input GB | optimize s | candidate | verify s | status | rule | static | build | baseline | load "
        "| correctness (truth) | buffers | checks | timing | peak GB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["results"]:
        v = r.get("verify") or {}
        d = v.get("durations_s") or {}
        o = r.get("optimize") or {}
        c = r.get("candidate") or {}
        checks = None if "buffer_reuse" not in d and "compute_and_streams" not in d else \
            d.get("buffer_reuse", 0.0) + d.get("compute_and_streams", 0.0)
        corr = fmt(d.get("correctness")) + (f" ({fmt(d.get('ground_truth'))})" if "ground_truth" in d else "")
        wall = v.get("wall_s")
        lines.append(
            f"| {r['task']} | {r['input_gb']:.2f} | {fmt(o.get('seconds'))} | {c.get('id') or '—'} | "
            f"{fmt(wall)}{' **>60**' if wall and wall > 60 else ''} | {v.get('status') or '—'} | {v.get('rule') or '—'} | "
            f"{fmt(d.get('static_guards'))} | {fmt(d.get('build'))} | {fmt(d.get('baseline'))} | {fmt(d.get('load'))} | "
            f"{corr} | {fmt(d.get('buffers'))} | {fmt(checks)} | {fmt(d.get('timing'))} | "
            f"{fmt((v.get('peak_bytes') or 0) / GB if v.get('peak_bytes') else None)} |")
    peaks = [r for r in doc["results"] if (r.get("verify") or {}).get("peak_memory_bytes")]
    if peaks:
        lines += ["", "Peak GPU memory per stage (GB):", "",
                  "| problem | " + " | ".join(STAGES) + " | overall |", "|---|" + "---|" * (len(STAGES) + 1)]
    for r in peaks:
        v = r["verify"]
        p = v["peak_memory_bytes"]
        lines.append(f"| {r['task']} | " + " | ".join(fmt(p[s] / GB, 2) if s in p else "—" for s in STAGES)
                     + f" | {fmt(v['peak_bytes'] / GB, 2)} |")
    lines += ["", "Per problem (candidate, verdict, why not):", ""]
    for r in doc["results"]:
        v = r.get("verify") or {}
        c = r.get("candidate") or {}
        bits = [f"input {r['input_gb']:.2f} GB ({r['selected_by']})"]
        if c:
            bits.append(f"candidate {c.get('id')}: {c.get('why')}")
        if v.get("status"):
            bits.append(f"verdict {v['status']}" + (f" by the {v['rule']} rule" if v.get("rule") else "")
                        + (f", KernelBench's 1e-4 check {'passes' if v['kernelbench_strict'] else 'fails'}"
                           if isinstance(v.get("kernelbench_strict"), bool) else "")
                        + (f", {v['speedup_vs_eager']:.2f}x vs eager" if v.get("speedup_vs_eager") else ""))
        if v.get("memory"):
            m = v["memory"]
            bits.append(f"trial {fmt((m.get('trial_bytes') or 0) / GB, 2)} GB, kept on {m.get('kept_on')}")
        if v.get("truth_skipped"):
            bits.append("truth skipped: " + "; ".join(v["truth_skipped"]))
        if r.get("why"):
            bits.append("**" + r["why"].replace("|", "\\|").replace("\n", " ") + "**")
        lines.append(f"- {r['task']}: " + "; ".join(bits))
    if doc.get("not_run"):
        lines += ["", "Not run (budget): " + ", ".join(doc["not_run"])]
    if doc.get("unsized"):
        lines += ["", "Could not be sized: " + "; ".join(f"{u['task']} ({u['error']})" for u in doc["unsized"])]
    return "\n".join(lines) + "\n"


def save(out_dir: str, doc: dict[str, Any]) -> None:
    write_results(out_dir, doc, markdown(doc))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="*", help="task files (default: chosen from --root)")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(REPO), "shared", "kernelbench"),
                    help="a KernelBench folder (levelN/*.py)")
    ap.add_argument("--largest", type=int, default=10)
    ap.add_argument("--also", action="append", default=None,
                    help="regex on a level-1 problem's name, run first (in the order given) when its inputs "
                         "reach --also-min-gb (repeatable; default: gelu, softmax, rmsnorm)")
    ap.add_argument("--also-min-gb", type=float, default=6.0)
    ap.add_argument("--out", required=True, help="results.json and results.md")
    ap.add_argument("--work", help="reports, job folders, logs (default OUT/work)")
    ap.add_argument("--stitchcuda", help="the host binary (default build-gpu/bin/stitchcuda, else build/bin/stitchcuda)")
    ap.add_argument("--python", default="python3", help="the harness's interpreter (also sizes the tasks)")
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--wall-seconds", type=float, default=30)
    ap.add_argument("--ncu-runs", type=int, default=0, help="Nsight Compute runs per optimize (7-10 s each)")
    ap.add_argument("--budget", type=float, default=560, help="seconds for the whole call")
    ap.add_argument("--optimize-timeout", type=float, default=200)
    ap.add_argument("--verify-timeout", type=float, default=200)
    ap.add_argument("--verify-reserve", type=float, default=60,
                    help="seconds an optimize leaves to its verify within the budget")
    ap.add_argument("--verdict-from-optimize", action="store_true",
                    help="no separate verify: the stages of the verdict optimize's verifier kept for the candidate")
    args = ap.parse_args()
    t_start = time.monotonic()
    deadline = t_start + args.budget
    args.also = args.also if args.also is not None else ["gelu", "softmax", "rmsnorm"]
    args.out = os.path.abspath(args.out)
    args.work = os.path.abspath(args.work or os.path.join(args.out, "work"))
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    binary = args.stitchcuda or next((p for p in (os.path.join(REPO, "build-gpu", "bin", "stitchcuda"),
                                                   os.path.join(REPO, "build", "bin", "stitchcuda")) if os.path.exists(p)), None)
    if not binary:
        print("no stitchcuda binary: build it (ninja -C build-gpu stitchcuda) or pass --stitchcuda", file=sys.stderr)
        return 2
    # Job folders and the verify cache under --work, so nothing lands in the user's state folder.
    args.host_args = ["--jobs-dir", os.path.join(args.work, "jobs"), "--python", args.python,
                      "--ncu-runs", str(args.ncu_runs), "--log-level", "warning"]
    host = [os.path.abspath(binary)]
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    files = [os.path.abspath(t) for t in args.tasks] or sorted(
        glob.glob(os.path.join(os.path.abspath(args.root), "level*", "*.py")))
    sized = scan(args.python, files, timeout=max(30.0, args.budget / 4))
    if args.tasks:
        chosen = [dict(r, selected_by="named") for r in sized["tasks"] if r.get("input_bytes") is not None]
        selection = "the task files named on the command line"
    else:
        chosen = select(sized["tasks"], args.largest, args.also, args.also_min_gb * GB)
        selection = (f"the {args.largest} largest problems of {args.root} by input bytes (get_inputs() on the meta "
                     f"device), after the level-1 problems matching {', '.join(args.also)} with inputs of at least "
                     f"{args.also_min_gb:g} GB")
        missing = [p for p in args.also if not any(r["selected_by"] == "--also " + p for r in chosen)]
        if missing:
            selection += f" (none of that size matches {', '.join(missing)})"
    unsized = [{"task": task_key(r["file"]), "error": r.get("error")} for r in sized["tasks"] if r.get("input_bytes") is None]
    doc: dict[str, Any] = {
        "format": "stitchcuda.large_problems/1",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": sized["hello"],
        "command": "python3 " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO)] + sys.argv[1:]),
        "optimize_command": f"stitchcuda optimize TASK --iterations {args.iterations} --wall-seconds {args.wall_seconds:g} "
                            f"--out DIR --ncu-runs {args.ncu_runs}",
        "verify_command": ("none: the stages are optimize's own verdict (JOB/candidates/cN/verdict.json)"
                           if args.verdict_from_optimize else
                           "stitchcuda verify --reference TASK --candidate JOB/candidates/cN --json"),
        "selection": selection, "budget_s": args.budget,
        "limits_s": {"optimize": args.optimize_timeout, "verify": args.verify_timeout},
        "results": [], "not_run": [], "unsized": unsized,
    }
    print(f"{len(chosen)} problem(s): " + ", ".join(f"{task_key(r['file'])} {r['input_bytes'] / GB:.2f} GB" for r in chosen),
          flush=True)
    save(args.out, doc)
    for i, row in enumerate(chosen):
        if deadline - time.monotonic() < args.verify_reserve + 20:
            doc["not_run"] = [task_key(r["file"]) for r in chosen[i:]]
            break
        try:
            result = run_problem(args, host, row, deadline)
        except Exception as exc:  # this script's own failure on one problem is that problem's row
            result = dict(task=task_key(row["file"]), file=row["file"], input_bytes=row["input_bytes"],
                          input_gb=round(row["input_bytes"] / GB, 3), selected_by=row["selected_by"],
                          why=f"the benchmark script failed here: {type(exc).__name__}: {exc}")
        doc["results"].append(result)
        v = result.get("verify") or {}
        print(f"[{result['task']}] optimize {fmt((result.get('optimize') or {}).get('seconds'))} s, verify "
              f"{fmt(v.get('wall_s'))} s, {v.get('status') or '—'}, peak "
              f"{fmt((v.get('peak_bytes') or 0) / GB, 2)} GB" + (f"; {result['why']}" if result.get("why") else ""),
              flush=True)
        save(args.out, doc)
    doc["seconds"] = round(time.monotonic() - t_start, 1)
    save(args.out, doc)
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
