"""KernelBench's own judgement of our verified candidates (issue 20): for every task a `stitchcuda bench`
run verified, the best candidate is exported as one KernelBench file (`python3 -m stitchcuda_harness export`,
load_inline), the exports' extensions are built in parallel (one process per export, as many at once as
--jobs), and `stitchcuda verify --kernelbench` runs each export by KernelBench's protocol (seeded construction,
nothing copied, 5 trials, allclose against eager at atol = rtol = 1e-4 and at 1e-2). Writes results.json and
results.md into --out after every task.

The candidate folders are found from the bench's own files: the `[CODE]`/`[REFINE]` "candidate cN: ... in DIR"
lines of a task's `log` where the bench kept them, else the job named by the task's report
(RESULTS/reports/<task>/report.json: job.logPath, whose folder holds candidates/cN). The job folders exist only
on the machine that ran the bench, so run this there, right after it (bench/run_selected.sh does with
KB_EXPORTS=1). TORCH_EXTENSIONS_DIR is set inside --out, so the check reuses the parallel builds instead of
compiling each export again one at a time.

    python3 bench/kernelbench_exports.py --results build-gpu/suite --tasks .kb --out DIR [--budget 560]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
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

from large_problems import PR_SET_CHILD_SUBREAPER, stop_adopted_group_leaders  # bench/ is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(REPO, "harness")
CANDIDATE_LINE = re.compile(r"\[(?:CODE|REFINE)\] candidate (c\d+): .* in (\S.*/candidates/c\d+)\s*$")

# Imports an export the way KernelBench does (its file as a module, nothing of ours on the path), which
# runs its load_inline: the extension is built into TORCH_EXTENSIONS_DIR, or found there.
_BUILD = r"""
import importlib.util, sys, time
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("kernelbench_export", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
getattr(module, "ModelNew")
print(f"built in {time.perf_counter() - t0:.1f} s")
"""

_HELLO = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from stitchcuda_harness.environment_info import hello
print(json.dumps(hello()))
"""


def load_results(path: str) -> tuple[dict[str, Any], str]:
    """The bench's results.json and its folder (where reports/ and jobs/ are)."""
    file = os.path.join(path, "results.json") if os.path.isdir(path) else path
    with open(file) as f:
        doc = json.load(f)
    if not isinstance(doc.get("results"), list):
        raise ValueError(f"{file} has no 'results' list: not a stitchcuda bench results file")
    return doc, os.path.dirname(os.path.abspath(file))


def candidate_dir(row: dict[str, Any], results_dir: str) -> tuple[Optional[str], str]:
    """(the best candidate's folder, where it was found or why not)."""
    best = row.get("best")
    for line in row.get("log") or []:
        m = CANDIDATE_LINE.search(line)
        if m and m.group(1) == best:
            if os.path.isdir(m.group(2)):
                return m.group(2), "the task's log"
            return None, f"{m.group(2)} (from the task's log) is not on this machine"
    report_file = os.path.join(results_dir, "reports", row["task"], "report.json")
    try:
        with open(report_file) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return None, (f"no [CODE] line for {best} in the task's log and no report at {report_file} "
                      "(the job folders exist only on the machine that ran the bench)")
    for entry in report.get("log") or []:  # the job's recent log: {phase, message, ...}
        m = CANDIDATE_LINE.search(f"[{entry.get('phase', '')}] {entry.get('message', '')}")
        if m and m.group(1) == best and os.path.isdir(m.group(2)):
            return m.group(2), "the report's log"
    log_path = (report.get("job") or {}).get("logPath") or ""
    d = os.path.join(os.path.dirname(log_path), "candidates", best) if log_path else ""
    if d and os.path.isdir(d):
        return d, "the report's job folder"
    return None, f"{d or 'the job folder'} (from {report_file}) is not on this machine"


def stop_group(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(argv: list[str], timeout: float, env: Optional[dict[str, str]] = None, host: bool = False) -> dict[str, Any]:
    """argv in its own process group under a limit (the group is killed at the limit). For the host
    (`host`), a killed host's harness worker, which leads a group of its own, is stopped too once this
    process has adopted it; only then, since the parallel builds are group leaders of their own."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         cwd=REPO, env=env)
    try:
        out, err = p.communicate(timeout=max(1.0, timeout))
        timed_out = False
    except subprocess.TimeoutExpired:
        stop_group(p)
        out, err = p.communicate()
        timed_out = True
        if host:
            stop_adopted_group_leaders()
    return {"exit": p.returncode, "timed_out": timed_out, "seconds": round(time.perf_counter() - t0, 2),
            "stdout": out, "stderr": err}


def last_lines(text: str, n: int = 4) -> str:
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return " | ".join(lines[-n:])[-500:]


def failure(text: str) -> str:
    """What a failed build says: its first compiler errors (a failed ninja ends with the command lines,
    not the reason), else the end of the output."""
    errors = [l.strip() for l in (text or "").splitlines() if re.search(r"\berror\b", l) and "Error building" not in l
              and "CalledProcessError" not in l]
    return " | ".join(errors[:2])[:500] if errors else last_lines(text)


def export(python: str, cand: str, out_file: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=HARNESS + (":" + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    r = run([python, "-m", "stitchcuda_harness", "export", "--candidate", cand, "--out", out_file], 120, env)
    if r["exit"] == 0 and os.path.isfile(out_file):
        return {"ok": True, "seconds": r["seconds"]}
    return {"ok": False, "seconds": r["seconds"], "error": last_lines(r["stderr"] or r["stdout"]) or f"exit {r['exit']}"}


def build(python: str, export_file: str, timeout: float) -> dict[str, Any]:
    r = run([python, "-c", _BUILD, export_file], timeout)
    if r["timed_out"]:
        return {"ok": False, "seconds": r["seconds"], "error": f"the load_inline build ran past {timeout:.0f} s"}
    if r["exit"] == 0:
        return {"ok": True, "seconds": r["seconds"]}
    return {"ok": False, "seconds": r["seconds"], "error": failure(r["stderr"]) or f"exit {r['exit']}"}


def extension_name(export_file: str) -> Optional[str]:
    """The load_inline name of an export: two exports of one name would build into one folder."""
    with open(export_file, encoding="utf-8") as f:
        m = re.search(r"load_inline\(name='([^']+)'", f.read())
    return m.group(1) if m else None


def check(host: list[str], host_args: list[str], task_file: str, export_file: str, timeout: float) -> dict[str, Any]:
    r = run(host + ["verify", "--kernelbench", "--reference", task_file, "--candidate", export_file, "--json"] + host_args,
            timeout, host=True)
    if r["timed_out"]:
        return {"seconds": r["seconds"], "status": "timed_out", "error": {"stage": "check", "message":
                f"stitchcuda verify --kernelbench ran past {timeout:.0f} s and was killed"}}
    try:
        reply = json.loads(r["stdout"])
    except ValueError:
        return {"seconds": r["seconds"], "status": "no_result",
                "error": {"stage": "check", "message": f"exit {r['exit']}: {last_lines(r['stderr'])}"}}
    if "error" in reply and "status" not in reply:  # the harness call itself failed (HeadlessVerify)
        e = reply["error"] or {}
        return {"seconds": r["seconds"], "status": "harness_error",
                "error": {"stage": "check", "message": f"{e.get('code')}: {e.get('message')}"[:500]}}
    keep = ("status", "trials", "correct_1e-4", "correct_1e-2", "weights", "seed", "error", "per_trial", "device")
    return {"seconds": r["seconds"], **{k: reply.get(k) for k in keep}}


# ---- files --------------------------------------------------------------------------------------------

def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    def all_trials(r: dict[str, Any], key: str) -> bool:
        c = r.get("check") or {}
        return bool(c.get("trials")) and c.get(key) == c.get("trials") and not c.get("error")
    return {
        "verified": len(rows),
        "exported": sum(1 for r in rows if (r.get("export") or {}).get("ok")),
        "built": sum(1 for r in rows if (r.get("build") or {}).get("ok")),
        "checked": sum(1 for r in rows if (r.get("check") or {}).get("trials") and (r.get("check") or {}).get("status")
                       in ("passed", "failed")),
        "correct_1e-4": sum(1 for r in rows if all_trials(r, "correct_1e-4")),
        "correct_1e-2": sum(1 for r in rows if all_trials(r, "correct_1e-2")),
    }


def why(r: dict[str, Any]) -> str:
    if r.get("why"):
        return r["why"]
    c = r.get("check") or {}
    e = c.get("error") or {}
    bits = []
    if (r.get("build") or {}).get("error"):
        bits.append("parallel build: " + r["build"]["error"])
    if e:
        bits.append(f"{e.get('stage')}: {e.get('message')}")
    if c.get("weights") not in (None, "same"):
        bits.append(f"weights differ under one seed: {c['weights']}")
    return "; ".join(bits)


def markdown(doc: dict[str, Any]) -> str:
    env, s = doc["environment"], doc["summary"]
    bench_env = doc.get("bench_environment") or {}
    lines = [
        "# KernelBench's protocol on the exports of verified candidates",
        "",
        f"- date: {doc['date']}",
        f"- GPU: {env.get('gpu')}, driver {env.get('driver')}, CUDA {env.get('torchCuda')} (PyTorch's build), "
        f"PyTorch {env.get('torch')}, Python {env.get('python')}",
        f"- command: `{doc['command']}`",
        f"- bench results: `{doc['results']}` ({bench_env.get('gpu', '?')}, PyTorch {bench_env.get('torch', '?')}); "
        f"runs: " + "; ".join(f"`{r.get('command', '')}`" for r in doc.get("bench_runs") or []),
        f"- per task: `python3 -m stitchcuda_harness export --candidate BEST --out EXPORT`, its load_inline build "
        f"({doc['jobs']} at a time, TORCH_EXTENSIONS_DIR in the output folder), then "
        "`stitchcuda verify --kernelbench --reference TASK --candidate EXPORT --json` (seed 42, 5 trials)",
        "",
        "| verified | exported | built | checked | correct at 1e-4 | correct at 1e-2 |",
        "|---|---|---|---|---|---|",
        f"| {s['verified']} | {s['exported']} | {s['built']} | {s['checked']} | {s['correct_1e-4']} | {s['correct_1e-2']} |",
        "",
        "Correct means every trial within tolerance (KernelBench's `correctness`); the columns give trials passed.",
        "",
        "| task | best | build s | check s | status | 1e-4 | 1e-2 | max abs err | weights | why not |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        c = r.get("check") or {}
        b = r.get("build") or {}
        errs = [t.get("max_abs_err") for t in c.get("per_trial") or [] if t.get("max_abs_err") is not None]
        n = c.get("trials")
        at4 = f"{c.get('correct_1e-4')}/{n}" if n else "—"
        at2 = f"{c.get('correct_1e-2')}/{n}" if n else "—"
        err = f"{max(errs):.2e}" if errs else "—"
        reason = why(r).replace("|", "/").replace("\n", " ")[:300]
        lines.append(
            f"| {r['task']} | {r.get('best') or '—'} | {b.get('seconds', '—')} | {c.get('seconds', '—')} | "
            f"{c.get('status') or '—'} | {at4} | {at2} | {err} | {c.get('weights') or '—'} | {reason} |")
    if doc.get("not_checked"):
        lines += ["", "Not checked (budget): " + ", ".join(doc["not_checked"])]
    return "\n".join(lines) + "\n"


def save(out_dir: str, doc: dict[str, Any]) -> None:
    doc["summary"] = summary(doc["rows"])
    write_results(out_dir, doc, markdown(doc))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", required=True, help="a stitchcuda bench results folder (or its results.json)")
    ap.add_argument("--tasks", required=True, help="the task root the bench ran (TASKS/levelN/NAME.py)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--stitchcuda", help="the host binary (default build-gpu/bin/stitchcuda, else build/bin/stitchcuda)")
    ap.add_argument("--python", default="python3", help="the harness's interpreter")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="exports built at once")
    ap.add_argument("--build-timeout", type=float, default=300)
    ap.add_argument("--check-timeout", type=float, default=150)
    ap.add_argument("--check-jobs", type=int, default=4,
                    help="checks at once: correctness only, no timing, so they may share the GPU")
    ap.add_argument("--budget", type=float, default=560, help="seconds for the whole call")
    ap.add_argument("--arch", help="TORCH_CUDA_ARCH_LIST for the builds and the check (default: the GPU's)")
    args = ap.parse_args()
    deadline = time.monotonic() + args.budget
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    out = os.path.abspath(args.out)
    exports_dir = os.path.join(out, "exports")
    os.makedirs(exports_dir, exist_ok=True)
    # One extensions folder for the parallel builds and for the check's worker (it inherits this
    # environment), so the check finds every extension built.
    os.environ["TORCH_EXTENSIONS_DIR"] = os.path.join(out, "torch_extensions")
    if args.arch:
        os.environ["TORCH_CUDA_ARCH_LIST"] = args.arch
    binary = args.stitchcuda or next((p for p in (os.path.join(REPO, "build-gpu", "bin", "stitchcuda"),
                                                   os.path.join(REPO, "build", "bin", "stitchcuda")) if os.path.exists(p)), None)
    host = [os.path.abspath(binary)] if binary else []
    # The host's shared options follow the subcommand; the verify cache stays inside --out.
    host_args = ["--python", args.python, "--jobs-dir", os.path.join(out, "jobs"), "--log-level", "warning"]

    bench, results_dir = load_results(args.results)
    hello = run([args.python, "-c", _HELLO, HARNESS], 120)
    try:
        env = json.loads(hello["stdout"].strip().splitlines()[-1])
    except (ValueError, IndexError):
        env = {"error": last_lines(hello["stderr"])}
    doc: dict[str, Any] = {
        "format": "stitchcuda.kernelbench_exports/1",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": env, "bench_environment": bench.get("environment"), "bench_runs": bench.get("runs"),
        "command": "python3 " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO)] + sys.argv[1:]),
        "results": args.results, "jobs": args.jobs, "rows": [], "not_checked": [],
    }
    verified = [r for r in bench["results"] if r.get("verified") and r.get("best")]
    for r in verified:
        row: dict[str, Any] = {"task": r["task"], "best": r["best"], "speedup_eager": r.get("speedupEager")}
        row["task_file"] = os.path.join(os.path.abspath(args.tasks), r["task"] + ".py")
        cand, where = candidate_dir(r, results_dir)
        if not os.path.isfile(row["task_file"]):
            row["why"] = f"no task file {row['task_file']}"
        elif not cand:
            row["why"] = "candidate folder not found: " + where
        else:
            row["candidate"], row["found_in"] = cand, where
            row["export_file"] = os.path.join(exports_dir, r["task"].replace("/", "__") + ".py")
        doc["rows"].append(row)
    # Each export is a Python start-up (torch's import): all at once.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(export, args.python, row["candidate"], row["export_file"]): row
                   for row in doc["rows"] if "export_file" in row}
        for f in concurrent.futures.as_completed(futures):
            row = futures[f]
            row["export"] = f.result()
            if not row["export"]["ok"]:
                row["why"] = "export failed: " + row["export"]["error"]
    save(out, doc)
    print(f"{len(verified)} verified task(s), {sum(1 for r in doc['rows'] if 'why' not in r)} exported", flush=True)

    # The builds are CPU work (nvcc), independent of each other: all at once, up to --jobs. Exports
    # that share a load_inline name (the same source) share one folder, so only the first is built.
    todo = [r for r in doc["rows"] if "why" not in r]
    first: dict[str, dict[str, Any]] = {}
    for r in todo:
        name = extension_name(r["export_file"]) or r["export_file"]
        r["extension"] = name
        first.setdefault(name, r)
    build_limit = min(args.build_timeout, max(1.0, deadline - time.monotonic() - 30))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(build, args.python, r["export_file"], build_limit): r for r in first.values()}
        for f in concurrent.futures.as_completed(futures):
            futures[f]["build"] = f.result()
    for r in todo:
        if "build" not in r:
            owner = first[r["extension"]]
            r["build"] = dict(owner["build"], shared_with=owner["task"])
    save(out, doc)
    print(f"built {sum(1 for r in todo if r['build']['ok'])} of {len(todo)}", flush=True)

    # The checks run correctness only (no timing), a few at a time on the one GPU. A failed parallel
    # build is still checked: the check builds in its own process and says at which stage it stopped.
    if not host:
        for r in todo:
            r["why"] = "no stitchcuda binary to run the check (build it or pass --stitchcuda)"
        todo = []

    def checked(r: dict[str, Any]) -> dict[str, Any]:
        left = deadline - time.monotonic()
        if left < 20:
            return {}
        return check(host, host_args, r["task_file"], r["export_file"], min(args.check_timeout, left))

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.check_jobs)) as pool:
        futures = {pool.submit(checked, r): r for r in todo}
        for f in concurrent.futures.as_completed(futures):
            r, c = futures[f], f.result()
            if not c:
                continue
            r["check"] = c
            print(f"{r['task']}: {c.get('status')} {c.get('correct_1e-4')}/{c.get('trials')} at 1e-4, "
                  f"{c.get('correct_1e-2')}/{c.get('trials')} at 1e-2 ({c['seconds']:.0f} s)", flush=True)
            save(out, doc)
    doc["not_checked"] = [r["task"] for r in todo if "check" not in r]
    save(out, doc)
    s = doc["summary"]
    print(f"{s['verified']} verified, {s['exported']} exported, {s['built']} built, {s['checked']} checked: "
          f"{s['correct_1e-4']} correct at 1e-4, {s['correct_1e-2']} at 1e-2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
