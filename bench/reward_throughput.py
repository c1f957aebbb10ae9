"""Scoring throughput over GPUs (issue 33's target: 40 candidates scored with --gpus 4, and through serve-reward,
in at most 0.3x the one-GPU time, with the same verdicts as one GPU). The same rows go through
`stitchcuda score --batch --gpus G` for each G of --batch-gpus, then through `stitchcuda serve-reward --gpus G`
for each G of --service-gpus (every row posted at once from as many clients, each retrying its 429s after
Retry-After). Each run gets a fresh jobs folder, so candidate builds are cold in every run; with --warm, every
task's reference is timed first (eager and torch.compile: a baseline, ~12 s a task) and that baseline cache is
copied into each run's folder, as a training run that scores many rollouts of the same tasks has it after its
first step. Per run: the wall time (for score --batch from the command's start, its workers' start included; for
the service from the first post to the last answer, its workers started), each row's verdict, correctness,
speedup and reward; then each run's time and verdicts against the first run's. Results go to --out after every
run (results.json, results.md); --deadline S starts no run after S seconds.

Rows are `score --batch` rows (protocol/SCORE.md) from --rows ROWS.jsonl, from a bench run's jobs folder
(--from-jobs RESULTS/jobs: each job's task snapshot and its candidates/cN), or from the built-in brain's
candidates for the suite's tasks (--from-candidates DIR, the folder tests/builtin's generate_candidates writes):
groups of --per-task rows per task, as a GRPO step scores a group of rollouts of one prompt: the task's
variants (TF32 allowed, eager's precision, channels-last), padded with copies of its candidate that differ by a
comment (built again, as another rollout's code would be). A row's recorded `verdict` is dropped: the point is
the verifier running on the GPUs. bench/reward_throughput_gpu.sh runs it on a GPU machine in one command.

    python3 bench/reward_throughput.py --from-candidates .carry/reward_candidates --limit 40 --warm \\
        --batch-gpus 1 4 --service-gpus 4 --binary build-gpu/bin/stitchcuda --out OUT
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from result_files import write_results  # noqa: E402


def rows_from_jobs(jobs_dir: str) -> list[dict[str, Any]]:
    rows = []
    for job in sorted(glob.glob(os.path.join(jobs_dir, "*", ""))):
        tasks = glob.glob(os.path.join(job, "*.py"))
        if len(tasks) != 1:
            continue
        for candidate in sorted(glob.glob(os.path.join(job, "candidates", "c*", ""))):
            rows.append({"id": os.path.relpath(candidate, jobs_dir).rstrip("/"), "reference": tasks[0],
                         "candidate": candidate.rstrip("/")})
    return rows


def rows_from_candidates(candidates: str, tasks_dir: str, per_task: int, count: int, out_dir: str) -> list[dict[str, Any]]:
    """count // per_task tasks spread evenly over the suite (levels and operator families alike), each a group
    of per_task rows: its candidate's variants, then copies of its candidate told apart by a comment. The rows'
    candidates are copied under out_dir, so a run reads nothing it may have changed."""
    tasks = {os.path.basename(t)[:-3]: t for t in glob.glob(os.path.join(tasks_dir, "level*", "*.py"))}
    names = sorted((n for n in tasks if os.path.isdir(os.path.join(candidates, n))), key=lambda n: int(n.split("_")[0]))
    groups = max(1, count // per_task)
    chosen = [names[i * len(names) // groups] for i in range(min(groups, len(names)))]
    rows = []
    for name in chosen:
        variants = sorted(glob.glob(os.path.join(candidates, glob.escape(name) + ".*")))[:per_task - 1]
        group = [os.path.join(candidates, name)] + variants
        group += [os.path.join(candidates, name)] * (per_task - len(group))
        for k, source in enumerate(group):
            rid = f"{name}/{k}:{os.path.basename(source).partition('.')[2] or 'base'}"
            target = os.path.join(out_dir, "candidates", f"{name}.{k}")
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)
            if source == group[0] and k > 0:
                with open(os.path.join(target, "candidate.cu"), "a") as f:
                    f.write(f"\n// rollout {k} of the group\n")  # another content hash: built again
            row = {"id": rid, "reference": os.path.abspath(tasks[name]), "candidate": os.path.abspath(target)}
            if source.endswith(".tensor_cores"):
                row["allowPrecision"] = ["tf32"]  # the job that made this variant allowed TF32
            rows.append(row)
    return rows[:count]


def post(url: str, row: dict[str, Any]) -> tuple[int, dict[str, Any], int]:
    """The answer's status and body, after as many 429s as it took (counted)."""
    refused = 0
    while True:
        request = urllib.request.Request(url + "/v1/score", data=json.dumps(row).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=3600) as response:
                return response.status, json.load(response), refused
        except urllib.error.HTTPError as error:
            body = json.loads(error.read() or b"{}")
            if error.code != 429:
                return error.code, body, refused
            refused += 1
            time.sleep(float(error.headers.get("Retry-After", "1")) * (1 + 0.5 * random.random()))


def fresh_jobs_dir(out_dir: str, name: str, baselines: Optional[str]) -> str:
    """An empty jobs folder (cold builds), holding only the warm-up's baselines when there are some."""
    jobs_dir = os.path.join(out_dir, name)
    shutil.rmtree(jobs_dir, ignore_errors=True)
    os.makedirs(os.path.join(jobs_dir, ".verify-cache"))
    if baselines and os.path.isdir(baselines):
        shutil.copytree(baselines, os.path.join(jobs_dir, ".verify-cache", "baselines"))
    return jobs_dir


def run_service(binary: str, python: Optional[str], gpus: int, rows: list[dict[str, Any]], out_dir: str,
                baselines: Optional[str]) -> dict[str, Any]:
    jobs_dir = fresh_jobs_dir(out_dir, f"jobs-service-{gpus}gpu", baselines)
    args = [binary, "serve-reward", "--port", "0", "--gpus", str(gpus), "--root", "/", "--jobs-dir", jobs_dir,
            "--queue", str(len(rows))] + (["--python", python] if python else [])
    with open(os.path.join(out_dir, f"serve-reward-{gpus}gpu.log"), "w") as log:
        service = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            line = service.stdout.readline().strip()
            if not line.startswith("listening on "):
                raise RuntimeError(f"serve-reward did not start: {line!r} (see {log.name})")
            url = line.removeprefix("listening on ")
            while json.load(urllib.request.urlopen(url + "/v1/health"))["workersReady"] < gpus:
                time.sleep(0.5)  # workers started: a run measures scoring, not Python's start
            answers: list[Any] = [None] * len(rows)

            def client(i: int) -> None:
                started = time.monotonic()
                status, body, refused = post(url, rows[i])
                answers[i] = (status, body, refused, time.monotonic() - started)

            start = time.monotonic()
            threads = [threading.Thread(target=client, args=(i,)) for i in range(len(rows))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.monotonic() - start
            metrics = json.load(urllib.request.urlopen(url + "/v1/metrics"))
        finally:
            service.terminate()
            service.wait(timeout=60)
    results = [row_result(row, body, status, refused, seconds)
               for row, (status, body, refused, seconds) in zip(rows, answers)]
    return {"how": "serve-reward", "gpus": gpus, "wallSeconds": round(wall, 3), "rows": results, "metrics": metrics}


def run_batch(binary: str, python: Optional[str], gpus: int, rows: list[dict[str, Any]], out_dir: str,
              baselines: Optional[str], name: str = "batch") -> dict[str, Any]:
    rows_file, scores = os.path.join(out_dir, f"rows-{name}.jsonl"), os.path.join(out_dir, f"scores-{name}-{gpus}gpu.jsonl")
    with open(rows_file, "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)
    if os.path.exists(scores):
        os.remove(scores)  # a fresh run, not a resumed one
    args = [binary, "score", "--batch", rows_file, "--out", scores, "--gpus", str(gpus), "--jobs-dir",
            fresh_jobs_dir(out_dir, f"jobs-{name}-{gpus}gpu", baselines)] + (["--python", python] if python else [])
    start = time.monotonic()
    with open(os.path.join(out_dir, f"score-{name}-{gpus}gpu.log"), "w") as log:
        subprocess.run(args, stdout=log, stderr=log)
    wall = time.monotonic() - start
    by_row = {}
    with open(scores) if os.path.exists(scores) else open(os.devnull) as f:
        for line in f:
            answer = json.loads(line)
            by_row[answer["row"]] = answer
    results = []
    for i, row in enumerate(rows):
        answer = by_row.get(i, {"error": {"code": "no line in the scores file"}})
        worker = answer.get("worker") or {}  # where the row ran and its wall time (SCORE.md, Batch)
        results.append(row_result(row, answer, 422 if "error" in answer else 200, 0, worker.get("seconds")))
        results[-1]["gpu"] = worker.get("gpu")
    return {"how": "score --batch", "gpus": gpus, "wallSeconds": round(wall, 3), "rows": results, "metrics": None}


def row_result(row: dict[str, Any], body: dict[str, Any], status: int, refused: int,
               seconds: Optional[float]) -> dict[str, Any]:
    rule = body.get("rule", {})
    return {"id": row["id"], "http": status, "verdictStatus": body.get("verdictStatus"), "correct": rule.get("correct"),
            "speedupVsEager": rule.get("speedupVsEager"), "reward": body.get("reward"), "refused": refused,
            "seconds": None if seconds is None else round(seconds, 3), "error": body.get("error")}


def markdown(doc: dict[str, Any]) -> str:
    runs = doc["runs"]
    first = runs[0]
    lines = [f"# Scoring throughput over GPUs ({doc['date']}, {doc['device']})", "", f"command: `{doc['command']}`", ""]
    if doc.get("warmUp"):
        w = doc["warmUp"]
        lines += [f"Warm-up (not timed below): each of the {len(w['rows'])} tasks' baselines (eager and torch.compile) "
                  f"timed by score --batch --gpus {w['gpus']} in {w['wallSeconds']:.1f} s; every run below starts "
                  "from those baselines and otherwise cold (candidate builds, PTX).", ""]
    lines += ["| how | GPUs | rows | wall (s) | vs first | scored | 429s | latency p50 / p95 (s) | same verdicts as first |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        same = sum(a["verdictStatus"] == b["verdictStatus"] and a["correct"] == b["correct"]
                   for a, b in zip(r["rows"], first["rows"]))
        latency = "-"
        if r["metrics"]:
            latency = "{p50:.1f} / {p95:.1f}".format(**r["metrics"]["latencySeconds"])
        lines.append(f"| {r['how']} | {r['gpus']} | {len(r['rows'])} | {r['wallSeconds']:.1f} | "
                     f"{r['wallSeconds'] / first['wallSeconds']:.2f}x | {sum(x['http'] == 200 for x in r['rows'])} | "
                     f"{sum(x['refused'] for x in r['rows'])} | {latency} | {same}/{len(r['rows'])} |")
    # Each batch run's GPUs, busy and idle: the rows each worker scored and their wall time (its start
    # in its first row), against the run's wall time.
    for r in runs:
        if r["how"] != "score --batch":  # serve-reward's seconds are request latencies
            continue
        busy: dict[Any, list[float]] = {}
        for x in r["rows"]:
            if x["seconds"] is not None:
                busy.setdefault(x.get("gpu"), []).append(x["seconds"])
        if busy:
            parts = [f"GPU {g if g is not None else '(all visible)'}: {len(t)} rows, {sum(t):.1f} s" for g, t in
                     sorted(busy.items(), key=lambda kv: str(kv[0]))]
            lines += ["", f"{r['how']} on {r['gpus']} GPU(s), {r['wallSeconds']:.1f} s: " + "; ".join(parts)]
    lines += ["", "| row | " + " | ".join(f"{r['how']}, {r['gpus']} GPU: verdict, speedup, reward" for r in runs) + " |",
              "|---|" + "---|" * len(runs)]
    for i, row in enumerate(first["rows"]):
        cells = []
        for r in runs:
            x = r["rows"][i]
            speed = f"{x['speedupVsEager']:.2f}x" if isinstance(x["speedupVsEager"], (int, float)) else "-"
            cells.append(f"{x['verdictStatus'] or (x['error'] or {}).get('code', x['http'])}, {speed}, {x['reward']}")
        lines.append(f"| {row['id']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def read_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.rows:
        with open(args.rows) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        for i, row in enumerate(rows):
            row.setdefault("id", str(i))
            row["reference"], row["candidate"] = os.path.abspath(row["reference"]), os.path.abspath(row["candidate"])
    elif args.from_jobs:
        rows = rows_from_jobs(args.from_jobs)
    else:
        rows = rows_from_candidates(args.from_candidates, args.tasks, args.per_task, args.limit or 40, args.out)
    return [{k: v for k, v in row.items() if k != "verdict"} for row in rows[:args.limit]]


def warm_up(args: argparse.Namespace, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """score --batch over one row per task on all the GPUs: the baselines every run then starts from."""
    firsts = list({row["reference"]: row for row in reversed(rows)}.values())[::-1]
    gpus = max(args.batch_gpus + args.service_gpus)
    warm = run_batch(args.binary, args.python, gpus, firsts, args.out, None, name="warm")
    warm["baselines"] = os.path.join(args.out, f"jobs-warm-{gpus}gpu", ".verify-cache", "baselines")
    return warm


def main() -> int:
    started = time.monotonic()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--rows", help="score --batch rows (JSON lines)")
    source.add_argument("--from-jobs", help="a bench run's jobs folder: every candidate in it")
    source.add_argument("--from-candidates", help="generate_candidates' folder: groups of rows over the suite's tasks")
    parser.add_argument("--tasks", default="bench/tasks", help="the tasks of --from-candidates (default bench/tasks)")
    parser.add_argument("--per-task", type=int, default=4, help="rows per task with --from-candidates (default 4)")
    parser.add_argument("--limit", type=int, help="the first N rows only (--from-candidates: default 40)")
    parser.add_argument("--batch-gpus", type=int, nargs="*", default=[1, 4], help="score --batch runs (default 1 4)")
    parser.add_argument("--service-gpus", type=int, nargs="*", default=[4], help="serve-reward runs (default 4)")
    parser.add_argument("--warm", action="store_true", help="time every task's baselines first, untimed")
    parser.add_argument("--deadline", type=float, help="start no run after this many seconds")
    parser.add_argument("--binary", default="build/bin/stitchcuda")
    parser.add_argument("--python", help="the harness's interpreter (default: the host's rule)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = read_rows(args)
    if not rows:
        sys.exit("no rows")
    try:
        device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader", "-i", "0"],
                                capture_output=True, text=True).stdout.strip() or "no GPU"
    except OSError:
        device = "no GPU"
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": device,
                           "command": " ".join(sys.argv), "runs": []}
    baselines = None
    if args.warm:
        doc["warmUp"] = warm_up(args, rows)
        baselines = doc["warmUp"]["baselines"]
        print(f"warm-up: {len(doc['warmUp']['rows'])} tasks in {doc['warmUp']['wallSeconds']:.1f} s", flush=True)
    plan = [(run_batch, g) for g in args.batch_gpus] + [(run_service, g) for g in args.service_gpus]
    for how, gpus in plan:
        if args.deadline and time.monotonic() - started > args.deadline:
            print(f"deadline: {how.__name__} with {gpus} GPU(s) not run", flush=True)
            continue
        doc["runs"].append(how(args.binary, args.python, gpus, rows, args.out, baselines))
        write_results(args.out, doc, markdown(doc))
        last = doc["runs"][-1]
        print(f"{last['how']}, {gpus} GPU(s): {len(rows)} rows in {last['wallSeconds']:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
