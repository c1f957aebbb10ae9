"""The timer's own floor on this GPU: what the harness's timer protocol (design §7: L2 flush,
start event, the function, device-wide synchronize, end event) reports for no work and for one
launch, beside a memory-bound operator at two sizes, raw and with the floor taken off as the
timer now does, and the host time of one call. A task whose kernel time is near this floor
measures the timer and the host, not the kernel: bench tasks are sized well above it.

Run on the GPU machine from the repository root: python3 bench/timer_floor.py --out DIR
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "harness"))
from stitchcuda_harness.bandwidth import measure_bandwidth_gbps  # noqa: E402
from stitchcuda_harness.timer import Timer, TimerConfig  # noqa: E402


def host_us(fn, args, reps: int = 2000) -> float:
    """Host time of one call, the GPU kept busy enough that the launch queue never blocks it."""
    for _ in range(20):
        fn(*args)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    t = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    return t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    dev = torch.device("cuda")
    timer = Timer(dev, TimerConfig(max_seconds=1.0, iterations=200))
    bw = measure_bandwidth_gbps(dev)
    one = torch.empty(1, device=dev)
    rows = []

    def row(name: str, fn, inputs, moved_bytes: int = 0) -> None:
        st = timer.measure(fn, [inputs])
        floor_us = moved_bytes / (bw * 1e9) * 1e6 if moved_bytes else 0.0
        rows.append({"case": name, "raw_median_us": st.raw_median_ms * 1e3, "median_us": st.median_ms * 1e3,
                     "p10_us": st.p10_ms * 1e3, "p90_us": st.p90_ms * 1e3, "memory_floor_us": floor_us,
                     "host_us_per_call": host_us(fn, inputs)})

    row("no work", lambda: None, [])
    row("one tiny launch", lambda t: t.zero_(), [one])
    for n in (4096, 8192):
        x = torch.randn(n, n, device=dev)
        row(f"eager relu {n}x{n} fp32", torch.relu, [x], 2 * x.numel() * 4)
        del x
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "copy_bandwidth_gbps": round(bw, 1), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "command": "python3 bench/timer_floor.py --out DIR"}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "timer_floor.json"), "w") as f:
        json.dump({"environment": env, "rows": rows}, f, indent=1)
    lines = [f"# Timer floor\n\n{env['date']}: {env['gpu']}, PyTorch {env['torch']} (CUDA {env['cuda']}), "
             f"copy bandwidth {env['copy_bandwidth_gbps']} GB/s\ncommand: `{env['command']}`\n",
             f"timer floor (median of the protocol around no work): {timer.floor_ms() * 1e3:.1f} µs\n",
             "| case | raw median (µs) | minus floor (µs) | p10 | p90 | memory floor (µs) | host µs per call |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['raw_median_us']:.1f} | {r['median_us']:.1f} | {r['p10_us']:.1f} | {r['p90_us']:.1f} | "
                     f"{r['memory_floor_us']:.1f} | {r['host_us_per_call']:.1f} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "timer_floor.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
