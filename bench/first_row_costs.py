"""What a harness worker's first row costs beyond its later ones (issue 33: on 4 GPUs a batch's first rows
took 14-16 s where later rows of the same task took 3 s, and those seconds are paid once per worker). In one
fresh process, as a worker meets them: importing torch, the CUDA context, a first and a second profiler
session (the verifier traces kernels with it), the memory ceiling, then each (reference, candidate) pair
verified twice and its graph captured twice, with the verifier's own stage seconds. Prints a table and
writes --out JSON.
    python3 bench/first_row_costs.py --pair TASK.py CANDIDATE [--pair ...] --cache-dir DIR --out costs.json"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
_T0 = time.perf_counter()
import torch  # noqa: E402

_IMPORT_S = time.perf_counter() - _T0


def timed(rows: list[dict[str, Any]], label: str, fn: Callable[[], Any]) -> Any:
    t0 = time.perf_counter()
    out = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    rows.append({"step": label, "seconds": round(time.perf_counter() - t0, 3)})
    print(f"{label:<60} {rows[-1]['seconds']:8.3f} s", flush=True)
    return out


def profiled() -> None:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]):
        (torch.ones(1024, device="cuda") + 1).sum().item()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pair", nargs=2, action="append", default=[], metavar=("TASK", "CANDIDATE"))
    ap.add_argument("--cache-dir", required=True, help="the verifier's build and baseline cache")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from stitchcuda_harness.bandwidth import measure_bandwidth
    from stitchcuda_harness.graph_capture import capture_graph
    from stitchcuda_harness.task_loader import load_task
    from stitchcuda_harness.verifier import verify
    from stitchcuda_harness.verify_config import VerifyConfig
    rows: list[dict[str, Any]] = [{"step": "import torch", "seconds": round(_IMPORT_S, 3)}]
    print(f"{'import torch':<60} {_IMPORT_S:8.3f} s")
    dev = torch.device("cuda")
    timed(rows, "CUDA context (first tensor on the device)", lambda: torch.zeros(1, device=dev))
    timed(rows, "first profiler session", profiled)
    timed(rows, "second profiler session", profiled)
    timed(rows, "memory ceiling (bandwidth.py)", lambda: measure_bandwidth(dev, cache_dir=a.cache_dir))
    for task, candidate in a.pair:
        name = os.path.basename(task)
        for k in ("first", "second"):
            verdict = timed(rows, f"{name}: {k} verify", lambda: verify(task, candidate, VerifyConfig.from_params(
                {"cacheDir": a.cache_dir})))
            rows[-1]["status"] = verdict.status
            rows[-1]["stages"] = verdict.durations_s
            print("    " + ", ".join(f"{s} {v:.2f}" for s, v in verdict.durations_s.items() if v >= 0.05))
        for k in ("first", "second"):
            timed(rows, f"{name}: {k} graph capture", lambda: capture_graph(load_task(task, {}), dev, 0))
    with open(a.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(dev), "torch": torch.__version__, "steps": rows}, f, indent=1)


if __name__ == "__main__":
    main()
