"""One table from several `stitchcuda bench` calls over a problem set: a device machine stops a command
after ten minutes, so a 60-problem round is many calls, each with its own results.json (and, with
KB_EXPORTS=1, its kb_exports results). Each problem keeps its latest call's row (calls are given oldest
first); the summary counts problems per level, verified, faster than eager, and the geometric mean of the
verified candidates' speedup over eager. Prints markdown.

  python3 bench/merge_rounds.py --call a R/call_a_results.json R/call_a_kb_exports.json --call b ...
"""
from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any


def load(path: str | None) -> dict[str, Any]:
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def export_cell(row: dict[str, Any] | None) -> str:
    check = (row or {}).get("check") or {}
    if check.get("status") is None:
        return "—"
    if check.get("correct_1e-4") is None:
        return check["status"].replace("_", " ")
    n = check.get("trials", 5)
    return f"{check['correct_1e-4']}/{n} · {check['correct_1e-2']}/{n}"


def why_not(row: dict[str, Any]) -> str:
    if row.get("verified"):
        return ""
    if row.get("firstFailedCheck"):
        return row["firstFailedCheck"]
    return (row.get("error") or row.get("message") or "").split(" and was stopped")[0]


def merge(calls: list[tuple[str, str, str | None]]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The latest row per problem, and the latest completed export check per problem (a problem whose
    latest call left its export unchecked keeps an earlier call's check in this count, not in its row)."""
    rows: dict[str, dict[str, Any]] = {}
    checked: dict[str, dict[str, Any]] = {}
    for label, results, exports in calls:
        checks = {r["task"]: r for r in load(exports).get("rows", [])}
        checked.update({t: r["check"] for t, r in checks.items() if (r.get("check") or {}).get("correct_1e-4") is not None})
        for r in load(results).get("results", []):
            rows[r["task"]] = {**r, "call": label, "export": checks.get(r["task"])}
    return rows, checked


def summary(rows: dict[str, dict[str, Any]]) -> list[str]:
    out = ["| level | problems | verified | faster than eager | geomean vs eager (verified) |",
           "|---|---|---|---|---|"]
    levels = sorted({r["task"].split("/")[0] for r in rows.values()}) + ["all"]
    for level in levels:
        rs = [r for r in rows.values() if level == "all" or r["task"].startswith(level + "/")]
        ok = [r for r in rs if r.get("verified") and r.get("speedupEager")]
        faster = sum(1 for r in ok if r["speedupEager"] > 1.0)
        geo = math.exp(sum(math.log(r["speedupEager"]) for r in ok) / len(ok)) if ok else float("nan")
        out.append(f"| {level} | {len(rs)} | {len(ok)} ({100 * len(ok) / len(rs):.0f}%) | {faster} | {geo:.2f}x |")
    return out


def table(rows: dict[str, dict[str, Any]]) -> list[str]:
    def order(task: str) -> tuple[str, int]:
        level, name = task.split("/")
        return level, int(name.split("_")[0])

    out = ["| problem | verified | vs eager | vs torch.compile | KernelBench protocol on the export "
           "(trials correct at 1e-4 · at 1e-2) | why not | call |", "|---|---|---|---|---|---|---|"]
    for task in sorted(rows, key=order):
        r = rows[task]
        eager = f"{r['speedupEager']:.2f}x" if r.get("verified") and r.get("speedupEager") else "—"
        comp = f"{r['speedupCompile']:.2f}x" if r.get("verified") and r.get("speedupCompile") else "—"
        out.append(f"| {task} | {'yes' if r.get('verified') else 'no'} | {eager} | {comp} | "
                   f"{export_cell(r['export'])} | {why_not(r)} | {r['call']} |")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--call", nargs="+", action="append", required=True, metavar=("LABEL", "RESULTS_JSON"),
                   help="LABEL RESULTS_JSON [KB_EXPORTS_JSON], oldest call first")
    calls = [(c[0], c[1], c[2] if len(c) > 2 else None) for c in p.parse_args().call]
    rows, checked = merge(calls)
    print("\n".join(summary(rows)))
    strict = sum(1 for c in checked.values() if c["correct_1e-4"] == c.get("trials", 5))
    loose = sum(1 for c in checked.values() if c["correct_1e-2"] == c.get("trials", 5))
    print(f"\nExports checked by KernelBench's protocol (problems): {len(checked)}; every trial correct at 1e-4: "
          f"{strict}, at 1e-2: {loose}\n")
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
