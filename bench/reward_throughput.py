"""serve-reward's throughput with 1 and N GPUs (issue 33's target: 40 candidates with --gpus 4 in at most
0.3x the one-GPU time, with the same verdicts). For each GPU count it starts `stitchcuda serve-reward --gpus G`
with a fresh jobs folder (cold build and baseline caches each time, so the runs compare alike), posts every
row at once from as many clients (each retrying its 429s after Retry-After), and records the wall time from
the first post to the last answer, each row's verdict, correctness, speedup and reward, and the service's
metrics. It then compares each count's wall time with the first's and each row's verdict with the first run's.
With --also-batch the same rows also go through `stitchcuda score --batch --gpus G` (a fresh jobs folder too);
its wall time includes starting its workers, where the service's starts once they said hello.

Rows are `score --batch` rows (protocol/SCORE.md), from --rows ROWS.jsonl, or every candidate folder of a bench
run's jobs folder (--from-jobs RESULTS/jobs: each job's task snapshot and its candidates/cN). A row's recorded
`verdict` is dropped: the point is the verifier running on the GPUs.

    python3 bench/reward_throughput.py --from-jobs build-gpu/suite/jobs --limit 40 --gpus 1 4 --also-batch \\
        --binary build-gpu/bin/stitchcuda --out bench/results/reward_throughput_DATE_GPU
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
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


def run(binary: str, python: Optional[str], gpus: int, rows: list[dict[str, Any]], out_dir: str) -> dict[str, Any]:
    jobs_dir = os.path.join(out_dir, f"jobs-{gpus}gpu")
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


def run_batch(binary: str, python: Optional[str], gpus: int, rows: list[dict[str, Any]], out_dir: str) -> dict[str, Any]:
    rows_file, scores = os.path.join(out_dir, "rows.jsonl"), os.path.join(out_dir, f"scores-batch-{gpus}gpu.jsonl")
    with open(rows_file, "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)
    if os.path.exists(scores):
        os.remove(scores)  # a fresh run, not a resumed one
    args = [binary, "score", "--batch", rows_file, "--out", scores, "--gpus", str(gpus), "--jobs-dir",
            os.path.join(out_dir, f"jobs-batch-{gpus}gpu")] + (["--python", python] if python else [])
    start = time.monotonic()
    with open(os.path.join(out_dir, f"score-batch-{gpus}gpu.log"), "w") as log:
        subprocess.run(args, stdout=log, stderr=log)
    wall = time.monotonic() - start
    by_row = {}
    with open(scores) as f:
        for line in f:
            answer = json.loads(line)
            by_row[answer["row"]] = answer
    results = []
    for i, row in enumerate(rows):
        answer = by_row.get(i, {"error": {"code": "no line in the scores file"}})
        results.append(row_result(row, answer, 422 if "error" in answer else 200, 0, None))
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
    lines = [f"# serve-reward throughput ({doc['date']}, {doc['device']})", "", f"command: `{doc['command']}`", "",
             "| how | GPUs | rows | wall (s) | vs first | scored | 429s | latency p50 / p95 (s) | same verdicts as first |",
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--rows", help="score --batch rows (JSON lines)")
    source.add_argument("--from-jobs", help="a bench run's jobs folder: every candidate in it")
    parser.add_argument("--limit", type=int, help="the first N rows only")
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--binary", default="build/bin/stitchcuda")
    parser.add_argument("--python", help="the harness's interpreter (default: the host's rule)")
    parser.add_argument("--also-batch", action="store_true", help="the same rows through score --batch --gpus G too")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.rows:
        with open(args.rows) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        for i, row in enumerate(rows):
            row.setdefault("id", str(i))
            row["reference"], row["candidate"] = os.path.abspath(row["reference"]), os.path.abspath(row["candidate"])
    else:
        rows = rows_from_jobs(args.from_jobs)
    rows = [{k: v for k, v in row.items() if k != "verdict"} for row in rows[:args.limit]]
    if not rows:
        sys.exit("no rows")
    os.makedirs(args.out, exist_ok=True)
    try:
        device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader", "-i", "0"],
                                capture_output=True, text=True).stdout.strip() or "no GPU"
    except OSError:
        device = "no GPU"
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": device,
                           "command": " ".join(sys.argv), "runs": []}
    for gpus in args.gpus:
        for how in (run, run_batch) if args.also_batch else (run,):
            doc["runs"].append(how(args.binary, args.python, gpus, rows, args.out))
            write_results(args.out, doc, markdown(doc))
            last = doc["runs"][-1]
            print(f"{last['how']}, {gpus} GPU(s): {len(rows)} rows in {last['wallSeconds']:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
