"""What taking the rows at run time costs (RuntimeRows.h): each fixture's candidate generated twice by the
built-in coder, once from its capture as recorded (the rows the call's, where the half-batch plan agrees)
and once with the half-batch capture removed (every size baked in, as before), timed side by side on the
GPU at the captured shape: both built with the harness's nvcc build, run through their ModelNew on the
same seeded inputs, interleaved (fixed, any, fixed, any, ...) so that clocks and caches treat them alike,
each call timed with CUDA events (median of the rounds). Also checks that both give the same outputs.
Writes results.json and results.md into --out.

Here (no GPU needed): `python3 bench/rows_ab.py --generate DIR FIXTURE...` writes DIR/fixed/<fixture>/
and DIR/any/<fixture>/ with build/bin/generate_candidates. On the GPU machine, from the repository root:
    python3 bench/rows_ab.py --candidates DIR --out OUT FIXTURE...
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from result_files import write_results  # bench/ is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "graphs")
SEED = 42


def generate(out: str, fixtures: list[str]) -> None:
    """Both forms of each fixture's candidate: the fixture as recorded, and without its half-batch
    capture. The generator reads the fixtures in place, so they are edited for the second run and
    restored after it."""
    generator = os.path.join(REPO, "build", "bin", "generate_candidates")
    saved = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([generator, os.path.join(tmp, "any")], check=True, capture_output=True)
        try:
            for name in fixtures:
                path = os.path.join(FIXTURES, name + ".json")
                with open(path) as f:
                    saved[path] = f.read()
                graph = json.loads(saved[path])
                if isinstance(graph.get("batch"), dict):
                    graph["batch"].pop("graph", None)
                with open(path, "w") as f:
                    json.dump(graph, f)
            subprocess.run([generator, os.path.join(tmp, "fixed")], check=True, capture_output=True)
        finally:
            for path, text in saved.items():
                with open(path, "w") as f:
                    f.write(text)
        for form in ("fixed", "any"):
            for name in fixtures:
                target = os.path.join(out, form, name)
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(os.path.join(tmp, form, name), target)


def median(values: list[float]) -> float:
    s = sorted(values)
    return s[len(s) // 2]


def one(args: argparse.Namespace, name: str, builder: Any) -> dict[str, Any]:
    import torch

    from stitchcuda_harness.module_loader import load_module
    from stitchcuda_harness.task_loader import load_task

    with open(os.path.join(FIXTURES, name + ".json")) as f:
        task = load_task(os.path.join(REPO, json.load(f)["task"]))
    row: dict[str, Any] = {"fixture": name}
    models = {}
    for form in ("fixed", "any"):
        folder = os.path.join(args.candidates, form, name)
        with open(os.path.join(folder, "candidate.cu")) as f:
            row[f"{form}_rows_line"] = next((l[3:].strip() for l in f if l.startswith("// Rows")), "")
        build = builder.build(os.path.join(folder, "candidate.cu"))
        if not build.ok:
            row["why"] = f"{form}: the build failed: {'; '.join(str(d) for d in build.diagnostics[:3])[:300]}"
            return row
        module = load_module(os.path.join(folder, "model_new.py"), f"{form}_{name}", {"__stitch_library__": build.library})
        torch.manual_seed(SEED)
        models[form] = module.ModelNew(*task.get_init_inputs()).cuda()
    torch.manual_seed(SEED)
    eager = task.instantiate(torch.device("cuda"), SEED)
    torch.manual_seed(SEED)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    as_list = lambda o: list(o) if isinstance(o, (tuple, list)) else [o]  # noqa: E731
    with torch.no_grad():
        outs = {form: as_list(m(*inputs)) for form, m in models.items()}  # first calls: algorithms chosen
        row["same_outputs"] = all(torch.equal(a, b) for a, b in zip(outs["fixed"], outs["any"]))
        times: dict[str, list[float]] = {"fixed": [], "any": [], "eager": []}
        runs = {"fixed": models["fixed"], "any": models["any"], "eager": eager}
        for _ in range(args.rounds):
            for form, f in runs.items():
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                f(*inputs)
                end.record()
                torch.cuda.synchronize()
                times[form].append(start.elapsed_time(end))
    for form in times:
        row[f"{form}_ms"] = round(median(times[form]), 4)
    row["any_over_fixed"] = round(row["any_ms"] / row["fixed_ms"], 3)
    return row


def markdown(doc: dict[str, Any]) -> str:
    lines = ["# Rows taken at run time against rows baked in", "", f"- date: {doc['date']}", f"- GPU: {doc['gpu']}",
             f"- command: `{doc['command']}`", "",
             "| fixture | rows | fixed ms | any rows ms | any / fixed | eager ms | same outputs | why not |",
             "|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        rows = "any" if r.get("any_rows_line", "").startswith("Rows: any") else r.get("any_rows_line", "—")[:60]
        lines.append(f"| {r['fixture']} | {rows} | {r.get('fixed_ms', '—')} | {r.get('any_ms', '—')} | "
                     f"{r.get('any_over_fixed', '—')} | {r.get('eager_ms', '—')} | {r.get('same_outputs', '—')} | "
                     f"{r.get('why', '')} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixtures", nargs="+")
    ap.add_argument("--generate", metavar="DIR", help="write both forms of each fixture's candidate into DIR")
    ap.add_argument("--candidates", help="the folder --generate wrote")
    ap.add_argument("--out")
    ap.add_argument("--rounds", type=int, default=50)
    args = ap.parse_args()
    if args.generate:
        generate(args.generate, args.fixtures)
        return 0
    if not args.candidates or not args.out:
        ap.error("--candidates and --out (or --generate)")
    sys.path.insert(0, os.path.join(REPO, "harness"))
    import torch

    from stitchcuda_harness.nvcc_build import Builder

    os.makedirs(args.out, exist_ok=True)
    builder = Builder(os.path.join(args.out, "builds"))
    doc: dict[str, Any] = {
        "format": "stitchcuda.rows_ab/1", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, CUDA {torch.version.cuda}",
        "command": "python3 " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO)] + sys.argv[1:]),
        "results": []}
    for name in args.fixtures:
        try:
            row = one(args, name, builder)
        except Exception as exc:  # one fixture's failure is its row, the others still run
            row = {"fixture": name, "why": f"{type(exc).__name__}: {exc}"[:300]}
        doc["results"].append(row)
        print(json.dumps(row), flush=True)
        write_results(args.out, doc, markdown(doc))
    shutil.rmtree(os.path.join(args.out, "builds"), ignore_errors=True)
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
