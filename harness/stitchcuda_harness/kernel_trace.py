"""Which GPU kernels a call launched and on which streams, read from the PyTorch profiler
(CUPTI sees kernels from any library, ctypes ones included). A marker op launched by the judge
on the current stream names that stream; a candidate kernel on any other stream is work that the
caller's stream does not order (a side stream)."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .verdict import Finding


@dataclass
class KernelTrace:
    kernels: list[dict[str, Any]] = field(default_factory=list)
    marker_stream: Any = None
    error: str = ""


def trace_kernels(call: Callable[[], Any], device: torch.device) -> KernelTrace:
    marker = torch.empty(1, device=device)
    torch.cuda.synchronize()
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            marker.fill_(1.0)  # judge's marker: its kernel names the current stream
            call()
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
    out = [{"name": e.get("name", ""), "stream": e.get("args", {}).get("stream"), "duration_us": e.get("dur")}
           for e in kernels[1:]]
    return KernelTrace(out, marker_stream)


def stream_findings(trace: KernelTrace) -> list[Finding]:
    other = sorted({k["stream"] for k in trace.kernels if k["stream"] != trace.marker_stream}, key=str)
    if not other:
        return []
    names = sorted({k["name"][:80] for k in trace.kernels if k["stream"] != trace.marker_stream})
    return [Finding("side_stream", f"kernels ran on stream(s) {other}, not the caller's stream {trace.marker_stream}: {names}",
                    "profiler", data={"streams": other})]
