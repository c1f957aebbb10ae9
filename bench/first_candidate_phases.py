#!/usr/bin/env python3
"""Where the time to the first verified candidate goes, job by job, read from job folders (a bench
run's RESULTS/jobs, or `--jobs-dir`): each job's JSONL log (agents/JobLog) gives when each phase
ended, and each candidate's verdict.json the verifier's own stages (build, correctness, timing...).
Prints one table of phases and one of the first candidate's verify stages, and writes both as JSON.

    python3 bench/first_candidate_phases.py RESULTS/jobs [--out phases.json] [--task NAME ...]

Phases, in seconds, each from the end of the one before: `start` (the harness worker, up to its hello),
`load` (import and construct the model), `capture` (the ATen graph), `profile` (the reference's per-line
profile), `plan`, `code` (the first candidate written), then the first candidate's verify (its build and
the rest), and `baseline`: the reference's timing before the first verify, which overlaps the first build
when the log says so (eager alone; jobs before torch.compile was timed after the first verify timed it here
too). `first ok` is when the first candidate passed verification; `torch.compile` the seconds its timing took
after the first verified candidate (after the first verify in jobs before that change; none where the log has no
such line)."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
from typing import Any, Optional

_STEP = re.compile(r"(\w+) ([\d.]+) s")
_VERIFIED = re.compile(r"^(c\d+) verified")
_JUDGED = re.compile(r"^(c\d+) (verified|failed|could not be judged|compiled)")
_TIMED_IN = re.compile(r"timed in ([\d.]+) s")
STAGES = ("build", "static_guards", "baseline", "load", "correctness", "ground_truth", "buffers", "buffer_reuse",
          "compute_and_streams", "timing", "timed_outputs", "total")


def _time(text: str) -> float:
    return dt.datetime.strptime(text.rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.timezone.utc).timestamp()


def _job_start(job_id: str) -> Optional[float]:
    """A job id begins with its start time to the second (20261127-164302-3429)."""
    try:
        return dt.datetime.strptime(job_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=dt.timezone.utc).timestamp()
    except ValueError:
        return None


def _task_name(job_dir: str) -> str:
    snapshots = sorted(f for f in os.listdir(job_dir) if f.endswith(".py"))
    return snapshots[0][:-3] if snapshots else os.path.basename(job_dir)


def read_job(job_dir: str) -> Optional[dict[str, Any]]:
    """The phases of one job, or None where it has no log."""
    path = os.path.join(job_dir, "log.jsonl")
    if not os.path.isfile(path):
        return None
    events = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
                events.append((_time(record["time"]), record["method"], record.get("params", {})))
            except (ValueError, KeyError):
                continue
    if not events:
        return None
    marks: dict[str, float] = {}
    steps: dict[str, float] = {}
    first_ok: Optional[str] = None
    overlap = False
    for t, method, p in events:
        message, phase = p.get("message", ""), p.get("phase", "")
        if method == "stitchcuda/log" and phase == "BASELINE" and message.startswith("steps:"):
            steps.update({k: float(v) for k, v in _STEP.findall(message)})
        elif method == "stitchcuda/log" and phase == "BASELINE" and message.startswith("harness:"):
            marks.setdefault("start", t)
        elif method == "stitchcuda/log" and phase == "BASELINE" and message.startswith("task:"):
            marks.setdefault("load", t)
        elif method == "stitchcuda/log" and phase == "BASELINE" and message.startswith("graph:"):
            marks.setdefault("capture", t)
        elif method == "stitchcuda/log" and phase == "BASELINE" and message.startswith("baseline:"):
            m = _TIMED_IN.search(message)
            if "baseline" not in marks:
                marks["baseline"] = t
                if m:
                    steps["baseline"] = float(m.group(1))
                overlap = "while" in message
            elif m:  # the later line is torch.compile's, timed after the first verified candidate
                steps["compile"] = float(m.group(1))
        elif method == "stitchcuda/profile" and p.get("subject") == "reference":
            marks.setdefault("profile", t)
        elif method == "stitchcuda/log" and phase == "PLAN":
            marks.setdefault("plan", t)
        elif method == "stitchcuda/log" and phase == "CODE" and message.startswith("candidate c1"):
            marks.setdefault("code", t)
        elif method == "stitchcuda/log" and phase == "VERIFY" and _JUDGED.match(message):
            marks.setdefault("c1 judged", t)
            if not first_ok and (m := _VERIFIED.match(message)):
                first_ok = m.group(1)
                marks["first ok"] = t
        elif method == "stitchcuda/jobFinished":
            marks["end"] = t
    # t0: the job's start, from the harness start-up the log reports, else the job id (to the second).
    t0 = marks["start"] - steps["hello"] if "start" in marks and "hello" in steps else _job_start(os.path.basename(job_dir))
    if t0 is None:
        t0 = events[0][0]
    verdict: dict[str, Any] = {}
    vpath = os.path.join(job_dir, "candidates", "c1", "verdict.json")
    if os.path.isfile(vpath):
        with open(vpath) as f:
            verdict = json.load(f)
    build = verdict.get("build") or {}
    return {"job": os.path.basename(job_dir), "task": _task_name(job_dir), "steps": steps, "overlap": overlap,
            "marks": {k: round(v - t0, 2) for k, v in marks.items()}, "firstVerified": first_ok,
            "c1": {"passed": verdict.get("passed"), "durations": verdict.get("durations_s", {}),
                   "buildCached": build.get("cached"), "buildSeconds": build.get("seconds"),
                   "buildUnits": build.get("units", 1)}}


def _cell(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:.1f}"


def _span(marks: dict[str, float], name: str, before: list[str]) -> Optional[float]:
    """The seconds between the latest earlier mark and this one."""
    if name not in marks:
        return None
    earlier = [marks[b] for b in before if b in marks and marks[b] <= marks[name]]
    return marks[name] - (max(earlier) if earlier else 0.0)


def table(jobs: list[dict[str, Any]]) -> str:
    order = ["start", "load", "capture", "profile", "baseline", "plan", "code", "c1 judged"]
    head = ["task", "start", "load", "capture", "profile", "baseline", "plan", "code", "c1 verify",
            "first ok at", "torch.compile", "end"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for j in jobs:
        m = j["marks"]
        spans = [_span(m, name, order[:i]) for i, name in enumerate(order)]
        ec = j["steps"].get("baseline", spans[4])
        cells = [j["task"]] + [_cell(s) for s in spans[:4]] + [_cell(ec) + (" (beside build)" if j["overlap"] else "")] + \
                [_cell(s) for s in spans[5:]] + [(_cell(m.get("first ok")) + f" ({j['firstVerified']})") if j["firstVerified"]
                                                 else "none", _cell(j["steps"].get("compile")), _cell(m.get("end"))]
        rows.append("| " + " | ".join(cells) + " |")
    rows += ["", "c1's verify, by the verifier's stages (verdict.json durations_s, seconds; `build` is what verify waited",
             "for it, `nvcc` the build's own time and its translation units):", "",
             "| task | passed | nvcc | " + " | ".join(STAGES) + " |", "|" + "---|" * (len(STAGES) + 3)]
    for j in jobs:
        c1, d = j["c1"], j["c1"]["durations"]
        nvcc = "cached" if c1["buildCached"] else f"{_cell(c1['buildSeconds'])} ({c1['buildUnits']} units)"
        rows.append(f"| {j['task']} | {c1['passed']} | {nvcc} | " + " | ".join(_cell(d.get(s)) for s in STAGES) + " |")
    return "\n".join(rows)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jobs", help="a folder of job folders (RESULTS/jobs or the host's jobs dir)")
    ap.add_argument("--task", action="append", help="only jobs of this task (repeatable)")
    ap.add_argument("--out", help="write the phases as JSON here")
    args = ap.parse_args(argv)
    found = [read_job(os.path.join(args.jobs, d)) for d in sorted(os.listdir(args.jobs))
             if os.path.isdir(os.path.join(args.jobs, d))]
    jobs = [j for j in found if j and (not args.task or j["task"] in args.task)]
    if not jobs:
        print(f"no job logs under {args.jobs}", file=sys.stderr)
        return 1
    print(table(jobs))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(jobs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
