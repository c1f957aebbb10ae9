"""What the user keeps, run on a GPU (issue 23): `stitchcuda optimize TASK --out DIR` writes what Accept
writes (the model with its edit, and stitchcuda_kernels/ with the .cu and its loader); this script then
runs that saved model in a fresh Python process that has only PyTorch on its path (-E -s, no harness, no
host paths, its own cache folder), built by the loader with nvcc on first use, and compares its outputs
with the kept candidate's (run through the harness in another process: same seeded construction, same
inputs) and with the original model's. Per task: whether the saved model imported without the harness,
how long the loader's build took, whether its outputs equal the candidate's bit for bit, its distance to
the original, and what other batch sizes do (the program itself where it takes the rows of each call;
else chunks of the generated rows where its rows are independent, else the original forward, each after
the loader's one-time warning), against the
original model and timed beside it; then ten more batch sizes twice over, against the original. Writes
results.json and results.md into --out.

On the GPU machine, from the repository root, after building the host into build-gpu:
    python3 bench/accepted_program.py --out DIR [--work DIR] TASK.py ...
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from typing import Any

from result_files import write_results  # bench/ is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = 42

# The candidate as the verifier runs it: the harness builds its .cu and loads its ModelNew; built and fed
# the way KernelBench does (one seed before each construction, one before the inputs).
_CANDIDATE = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
from stitchcuda_harness.candidate_files import resolve_candidate
from stitchcuda_harness.module_loader import load_module
from stitchcuda_harness.nvcc_build import Builder
from stitchcuda_harness.task_loader import load_task
task, files = load_task(sys.argv[2]), resolve_candidate(sys.argv[3])
build = Builder(sys.argv[5]).build(files.cuda) if files.cuda else None
if build is not None and not build.ok:
    sys.exit("the candidate's build failed")
module = load_module(files.python, "candidate", {"__stitch_library__": build.library} if build else None)
torch.manual_seed(%(seed)d); init = task.get_init_inputs()
torch.manual_seed(%(seed)d); model = module.ModelNew(*init).cuda()
torch.manual_seed(%(seed)d); inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
with torch.no_grad():
    out = model(*inputs)
torch.save([o.cpu() for o in (out if isinstance(out, (tuple, list)) else [out])], sys.argv[4])
""" % {"seed": SEED}

# The saved model in a fresh interpreter with only PyTorch: the original's Model (for its outputs and for
# get_inputs) is loaded from the task file by path, the saved one is imported from the output folder.
_SAVED = r"""
import importlib.util, json, sys, time, warnings, torch
spec = importlib.util.spec_from_file_location("original", sys.argv[2])
original = importlib.util.module_from_spec(spec); spec.loader.exec_module(original)
t0 = time.perf_counter()
saved = __import__(sys.argv[1])
import stitchcuda_kernels
result = {"harness_loaded": any(m.startswith("stitchcuda_harness") for m in sys.modules)}
def build(seed, cls):
    torch.manual_seed(seed); init = original.get_init_inputs()
    torch.manual_seed(seed); return cls(*init).cuda()
model, reference = build(%(seed)d, saved.Model), build(%(seed)d, original.Model)
torch.manual_seed(%(seed)d); inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in original.get_inputs()]
as_list = lambda o: list(o) if isinstance(o, (tuple, list)) else [o]
with torch.no_grad():
    out = as_list(model(*inputs)); torch.cuda.synchronize()
    result["first_call_s"] = round(time.perf_counter() - t0, 2)
    ref = as_list(reference(*inputs))
    result["max_abs_err_vs_original"] = max(float((a - e).abs().max()) for a, e in zip(out, ref))
    torch.save([o.cpu() for o in out], sys.argv[3])
    # Other batch sizes: twice the rows (two whole chunks), two and a half times (three chunks, a sixth of
    # their rows padding), one and a half times (a quarter padding: the original forward) and one row.
    # Each against the original model on the same rows, and both timed (median of 10, CUDA events).
    def timed(f, args):
        times = []
        for _ in range(11):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(); f(*args); end.record(); torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return round(sorted(times[1:])[5], 4)
    rows = next(x.shape[0] for x in inputs if isinstance(x, torch.Tensor) and x.dim())
    result["batches"] = []
    for n in sorted({1, rows + (rows + 1) // 2, 2 * rows, 2 * rows + (rows + 1) // 2}):
        def take(x):
            if not isinstance(x, torch.Tensor) or not x.dim():
                return x
            return torch.cat([x] * (-(-n // rows)))[:n].contiguous()
        other = [take(x) for x in inputs]
        # The loader warns once per kind; cleared so that each batch size's row names what ran.
        getattr(model, "_stitch_program")._warned.clear()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = as_list(model(*other))
        want = as_list(reference(*other))
        result["batches"].append({"rows": n, "warnings": [str(w.message)[:300] for w in seen],
                                  "max_abs_err_vs_original": max(float((a - e).abs().max()) for a, e in zip(got, want)),
                                  "program_ms": timed(model, other), "original_ms": timed(reference, other)})
    # More batch sizes than a program keeps library states and graphs for (eight), twice over: the
    # oldest count's states are released and its graphs dropped, and each count comes back.
    cycle = [max(1, rows * k // 8) for k in range(1, 11)] * 2
    worst = 0.0
    for n in cycle:
        other = [torch.cat([x] * (-(-n // rows)))[:n].contiguous() if isinstance(x, torch.Tensor) and x.dim() else x
                 for x in inputs]
        got, want = as_list(model(*other)), as_list(reference(*other))
        worst = max([worst] + [float((a - e).abs().max()) for a, e in zip(got, want)])
    result["cycle"] = {"rows": cycle, "max_abs_err_vs_original": worst}
result["any_rows"] = getattr(model, "_stitch_program").any_rows
result["cache_files"] = sorted(f for _, _, fs in __import__("os").walk(sys.argv[4]) for f in fs)
print(json.dumps(result))
""" % {"seed": SEED}


def run(argv: list[str], timeout: float, **kw: Any) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def one_task(args: argparse.Namespace, task: str) -> dict[str, Any]:
    name = os.path.splitext(os.path.basename(task))[0]
    key = os.path.basename(os.path.dirname(task)) + "/" + name
    out_dir = os.path.join(args.work, key.replace("/", "__"))
    row: dict[str, Any] = {"task": key}
    t0 = time.monotonic()
    o = run([args.stitchcuda, "optimize", task, "--out", out_dir, "--iterations", "1", "--wall-seconds", "25",
             "--ncu-runs", "0", "--python", sys.executable, "--jobs-dir", os.path.join(args.work, "jobs"),
             "--log-level", "warning"], args.timeout)
    row["optimize_s"] = round(time.monotonic() - t0, 1)
    program = next((l for l in o.stdout.splitlines() if l.startswith("program: ")), "")
    row["program"] = program[len("program: "):]
    if not program:
        row["why"] = f"optimize exited {o.returncode} without writing a program: {(o.stderr or o.stdout)[-300:]}"
        return row
    report = json.load(open(os.path.join(out_dir, "report.json")))
    kept = (report.get("finished") or {}).get("bestCandidateId")
    row["candidate"] = kept
    if not kept:
        row["why"] = "no verified candidate was kept"
        return row
    cand_dir = os.path.join(os.path.dirname(report["job"]["logPath"]), "candidates", kept)
    cand_pt, saved_pt = os.path.join(out_dir, "candidate_outputs.pt"), os.path.join(out_dir, "saved_outputs.pt")
    c = run([sys.executable, "-c", _CANDIDATE, os.path.join(REPO, "harness"), task, cand_dir, cand_pt,
             os.path.join(args.work, "harness-cache")], args.timeout)
    if c.returncode != 0:
        row["why"] = f"the candidate did not run through the harness: {c.stderr[-400:]}"
        return row
    cache = os.path.join(out_dir, "user-cache")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": out_dir, "XDG_CACHE_HOME": cache,
           **{k: os.environ[k] for k in ("CUDA_HOME", "LD_LIBRARY_PATH") if k in os.environ}}
    s = run([sys.executable, "-B", "-E", "-s", "-c", _SAVED, name, task, saved_pt, cache], args.timeout,
            cwd=out_dir, env=env)
    if s.returncode != 0:
        row["why"] = f"the saved model did not run in a fresh process: {s.stderr[-400:]}"
        return row
    row.update(json.loads(s.stdout.strip().splitlines()[-1]))
    import torch  # only here: the comparison of the two processes' saved outputs
    a, b = torch.load(cand_pt), torch.load(saved_pt)
    row["equal_to_candidate"] = len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))
    return row


def markdown(doc: dict[str, Any]) -> str:
    lines = ["# The saved program in a fresh process, on a GPU", "", f"- date: {doc['date']}",
             f"- GPU: {doc['gpu']}", f"- command: `{doc['command']}`", "",
             "| task | candidate | optimize s | harness imported | first call s (build + run) | equal to the candidate "
             "| max abs err vs original | why not |", "|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        err = r.get("max_abs_err_vs_original")
        lines.append(f"| {r['task']} | {r.get('candidate') or '—'} | {r.get('optimize_s', '—')} | "
                     f"{r.get('harness_loaded', '—')} | {r.get('first_call_s', '—')} | {r.get('equal_to_candidate', '—')} | "
                     f"{'—' if err is None else f'{err:.2e}'} | {r.get('why', '')} |")
    lines += ["", "Other batch sizes (the saved model against the original on the same rows; ms: median of 10):", "",
              "| task | rows | what ran (the loader's warning) | max abs err vs original | saved model ms | original ms |",
              "|---|---|---|---|---|---|"]
    for r in doc["results"]:
        for b in r.get("batches", []):
            ran = "; ".join(b["warnings"]) or ("the program (its rows are the call's)" if r.get("any_rows") else "—")
            lines.append(f"| {r['task']} | {b['rows']} | {ran} | {b['max_abs_err_vs_original']:.2e} | {b['program_ms']} | "
                         f"{b['original_ms']} |")
    lines += ["", "Ten more batch sizes, twice over (more than the eight a program keeps states and graphs for):", "",
              "| task | rows | max abs err vs original |", "|---|---|---|"]
    for r in doc["results"]:
        if "cycle" in r:
            lines.append(f"| {r['task']} | {', '.join(map(str, r['cycle']['rows'][:10]))} (x2) | "
                         f"{r['cycle']['max_abs_err_vs_original']:.2e} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", help="optimize's output folders and job folders (default OUT/work)")
    ap.add_argument("--stitchcuda", default=os.path.join(REPO, "build-gpu", "bin", "stitchcuda"))
    ap.add_argument("--timeout", type=float, default=240, help="seconds for each child process")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    args.work = os.path.abspath(args.work or os.path.join(args.out, "work"))
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    import torch
    doc: dict[str, Any] = {
        "format": "stitchcuda.accepted_program/1", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, CUDA {torch.version.cuda}"
               if torch.cuda.is_available() else "none",
        "command": "python3 " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO)] + sys.argv[1:]),
        "results": []}
    for task in args.tasks:
        try:
            row = one_task(args, os.path.abspath(task))
        except (subprocess.TimeoutExpired, OSError, ValueError, KeyError) as exc:
            row = {"task": task, "why": f"{type(exc).__name__}: {exc}"[:400]}
        doc["results"].append(row)
        print(json.dumps(row)[:600], flush=True)
        write_results(args.out, doc, markdown(doc))
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
