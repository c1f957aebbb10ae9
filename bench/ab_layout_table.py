"""Side by side, per problem, what each layout mode's run of bench/ab_layout.sh measured: speedup over
eager and over torch.compile of the best verified candidate, which candidate won and its title's layout
part. Reads BASE/<mode>/results.json for every mode folder present; prints a Markdown table and, with
--save DIR, writes it there as ab_layout.md with the rows as ab_layout.json."""
from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

MODES = ["auto", "nchw", "channels_last"]


def load(base: Path) -> dict[str, dict[str, dict]]:
    runs: dict[str, dict[str, dict]] = {}
    for mode in MODES:
        f = base / mode / "results.json"
        if f.is_file():
            runs[mode] = {r["task"]: r for r in json.loads(f.read_text())["results"]}
    return runs


def cell(r: dict | None) -> str:
    if not r or not r.get("verified"):
        return "not verified" if r else "not run"
    best = next((c for c in r.get("candidates", []) if c["id"] == r.get("best")), {})
    # What the refine step tried, as the title says it after the launch variant (b256v4i1): the
    # layout trial, eager's convolution, an fp32 retry.
    tail = re.split(r"\bb\d+v\d+i\d+,?\s*", best.get("title", ""), maxsplit=1)
    note = f" {r['best']}" + (f" ({tail[1]})" if len(tail) == 2 and tail[1] else "")
    return f"{r['speedupEager']:.2f}x / {r['speedupCompile']:.2f}x{note}"


def geomean(values: list[float]) -> str:
    return f"{math.exp(sum(map(math.log, values)) / len(values)):.2f}x" if values else "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base", type=Path)
    ap.add_argument("--save", type=Path)
    args = ap.parse_args()
    runs = load(args.base)
    modes = [m for m in MODES if m in runs]
    tasks = sorted({t for r in runs.values() for t in r})
    lines = ["| problem | " + " | ".join(f"--layout {m}: vs eager / vs compile, best" for m in modes) + " |",
             "|---|" + "---|" * len(modes)]
    lines += [f"| {t} | " + " | ".join(cell(runs[m].get(t)) for m in modes) + " |" for t in tasks]
    both = [t for t in tasks if all(runs[m].get(t, {}).get("verified") for m in modes)]
    lines.append(f"| geomean over the {len(both)} verified in every mode | " +
                 " | ".join(geomean([runs[m][t]["speedupEager"] for t in both]) + " / " +
                            geomean([runs[m][t]["speedupCompile"] for t in both]) for m in modes) + " |")
    table = "\n".join(lines)
    print(table)
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        (args.save / "ab_layout.md").write_text(table + "\n")
        rows = {t: {m: runs[m].get(t) for m in modes} for t in tasks}
        (args.save / "ab_layout.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
