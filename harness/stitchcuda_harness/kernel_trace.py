"""Which GPU kernels a call launched and on which streams, read from the PyTorch profiler
(CUPTI sees kernels from any library, ctypes ones included). A marker op launched by the judge
on the current stream names that stream, and a second one after the call marks where that stream
goes on. The candidate's own kernels (the `__global__` functions of its sources) must run on the
caller's stream. A library may fork work onto streams of its own and join it back (cuDNN's RNN
runs its layers so): such a kernel is ordered work when it ends before the end marker starts;
one that is still running then is a side stream, work the caller's stream does not order."""
from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Collection

import torch

from .verdict import Finding


@dataclass
class KernelTrace:
    kernels: list[dict[str, Any]] = field(default_factory=list)  # the call's, in start order, without the markers
    marker_stream: Any = None
    end_marker_us: float = float("inf")  # when the caller's stream went on after the call
    error: str = ""


_profiler_warm = False


def warm_profiler(device: torch.device) -> None:
    """Starts the profiler once in this process, with nothing to measure. Its first session costs
    seconds (CUPTI's start: 5.5 s on an H200, a later session 5 ms, bench/results/
    reward_throughput_2026-11-29b_h200/first_row_costs.txt), which a worker's first trace would pay
    inside its first verify; the verifier calls this while the candidate's nvcc runs in another
    process. A profiler that cannot start is said by the trace itself."""
    global _profiler_warm
    if _profiler_warm or device.type != "cuda":
        return
    _profiler_warm = True
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]):
            torch.empty(1, device=device).fill_(0.0)
            torch.cuda.synchronize(device)
    except Exception:  # trace_kernels meets the same failure and reports it
        pass


def trace_kernels(call: Callable[[], Any], device: torch.device) -> KernelTrace:
    marker = torch.empty(1, device=device)
    torch.cuda.synchronize()
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            marker.fill_(1.0)  # judge's marker: its kernel names the current stream
            call()
            marker.fill_(2.0)  # starts once the caller's stream has done all the call ordered on it
            torch.cuda.synchronize()
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            prof.export_chrome_trace(path)
            with open(path) as f:
                events = json.load(f).get("traceEvents", [])
        finally:
            os.unlink(path)
    except Exception as exc:  # profiler unavailable (no CUPTI, permissions): a skipped check, said so
        return KernelTrace(error=f"{type(exc).__name__}: {exc}")
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e.get("ts", 0))
    if not kernels:
        return KernelTrace(error="the profiler recorded no kernels (not even the judge's marker)")
    marker_stream = kernels[0].get("args", {}).get("stream")
    on_caller = [i for i, e in enumerate(kernels) if i > 0 and e.get("args", {}).get("stream") == marker_stream]
    end = on_caller[-1] if on_caller else len(kernels)
    out = [{"name": e.get("name", ""), "stream": e.get("args", {}).get("stream"), "duration_us": e.get("dur"),
            "start_us": e.get("ts", 0)} for i, e in enumerate(kernels) if 0 < i != end]
    end_us = float(kernels[end].get("ts", float("inf"))) if end < len(kernels) else float("inf")
    return KernelTrace(out, marker_stream, end_us)


_GLOBAL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)")


def own_kernel_names(files: tuple[str, ...]) -> set[str]:
    """The `__global__` functions written in the candidate's sources (a .cu, or a .py's load_inline)."""
    names: set[str] = set()
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            names.update(_GLOBAL.findall(f.read()))
    return names


def _kernel_identifier(name: str) -> str:
    """`void ns::chain<float>(float const*, ...)` -> `chain`."""
    head = re.sub(r"^void\s+", "", name).split("(")[0].split("<")[0]
    return head.split("::")[-1].strip()


def stream_findings(trace: KernelTrace, own: Collection[str] = ()) -> list[Finding]:
    off = [k for k in trace.kernels if k["stream"] != trace.marker_stream]
    mine = [k for k in off if _kernel_identifier(k["name"]) in own]
    running = [k for k in off if k not in mine and k["start_us"] + (k["duration_us"] or 0) > trace.end_marker_us]
    findings = []
    for kernels, why in ((mine, "the candidate's own kernels ran on stream(s) {streams}, not the caller's stream {caller}"),
                         (running, "kernels on stream(s) {streams} were still running when the caller's stream {caller} "
                                   "went on (not ordered before it)")):
        if kernels:
            streams = sorted({k["stream"] for k in kernels}, key=str)
            names = sorted({k["name"][:80] for k in kernels})
            findings.append(Finding("side_stream", why.format(streams=streams, caller=trace.marker_stream) + f": {names}",
                                    "profiler", data={"streams": streams}))
    return findings
