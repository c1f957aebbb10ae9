#!/usr/bin/env python3
"""Replays recorded JSON-RPC sessions through the real host binary and checks its output.

A transcript is a delimited session (messages separated by `---` lines) that the host
reads with `serve --input-style=delimited`; `#` lines are ignored by the host and carry the
expectations here:
  # expect: {json}     the next message the host writes must contain this (a subset match:
                       objects compare key by key, lists element by element at equal
                       length, everything else exactly)
  # exit: N            the host's exit status (default 0)
  # copy: FILE         copies FILE (relative to the transcript) into the job folder first;
                       ${JOBS} and ${HERE} in messages name the job folder and this folder
Every message the host writes must be expected, in order; an unexpected extra message fails.
Prints one line per transcript and ends with 'N passed, N failed'.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile


def subset(expected, actual) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(map(subset, expected, actual))
    return expected == actual


def parse_frames(data: bytes) -> list[dict]:
    frames, i = [], 0
    while i < len(data):
        end = data.index(b"\r\n\r\n", i)
        headers = data[i:end].decode()
        length = int(next(h.split(":", 1)[1] for h in headers.split("\r\n") if h.lower().startswith("content-length")))
        body = data[end + 4:end + 4 + length]
        frames.append(json.loads(body))
        i = end + 4 + length
    return frames


def run(binary: str, path: pathlib.Path) -> str | None:
    text = path.read_text()
    expects, exit_code, copies = [], 0, []
    for line in text.splitlines():
        if line.startswith("# expect:"):
            expects.append(json.loads(line[len("# expect:"):]))
        elif line.startswith("# exit:"):
            exit_code = int(line.split(":", 1)[1])
        elif line.startswith("# copy:"):
            copies.append(path.parent / line.split(":", 1)[1].strip())
    with tempfile.TemporaryDirectory() as jobs:
        for source in copies:
            shutil.copy(source, jobs)
        text = text.replace("${JOBS}", jobs).replace("${HERE}", str(path.parent.resolve()))
        proc = subprocess.run([binary, "serve", "--input-style=delimited", "--jobs-dir", jobs, "--log-level", "warning"],
                              input=text.encode(), capture_output=True, timeout=60)
    try:
        frames = parse_frames(proc.stdout)
    except (ValueError, StopIteration, json.JSONDecodeError) as e:
        return f"unreadable output ({e}): {proc.stdout[:300]!r}"
    for n, expected in enumerate(expects):
        if n >= len(frames):
            return f"message {n + 1} missing; expected {json.dumps(expected)}\nstderr: {proc.stderr.decode()[-500:]}"
        if not subset(expected, frames[n]):
            return f"message {n + 1}:\n  expected {json.dumps(expected)}\n  got      {json.dumps(frames[n])}"
    if len(frames) > len(expects):
        return f"unexpected extra message: {json.dumps(frames[len(expects)])}"
    if proc.returncode != exit_code:
        return f"exit status {proc.returncode}, expected {exit_code}\nstderr: {proc.stderr.decode()[-500:]}"
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("folder", type=pathlib.Path)
    args = ap.parse_args()
    passed = failed = 0
    for path in sorted(args.folder.glob("*.transcript")):
        problem = run(args.binary, path)
        if problem:
            failed += 1
            print(f"FAIL {path.name}: {problem}")
        else:
            passed += 1
            print(f"ok   {path.name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
