"""Per-operator GPU time of the reference through the PyTorch profiler, mapped to the lines of
the user's file that launched each operator (it feeds the editor's hovers). On a machine with no
GPU the same table holds CPU time and says so.

Lines are found by a line tracer that opens a profiler range `stitchcuda.line:N` for each line
executed in the task file; every op is attributed to its innermost such range. The profiler's own
stacks are not used: torch 1.13 reports the function's first line there, not the calling line."""
from __future__ import annotations

import os
import sys
from collections import defaultdict
from typing import Any, Optional

import torch

from .errors import from_exception
from .task_loader import Task

_RANGE = "stitchcuda.line:"
_PROFILER_OWN = {"Activity Buffer Request"}  # the profiler's own bookkeeping, not the model's work


class _LineRanges:
    """sys.settrace hook: one open record_function range per task-file frame, moved line by line."""

    def __init__(self, task_file: str) -> None:
        self.task_file = task_file
        self.open: dict[int, Any] = {}

    def _switch(self, frame: Any, line: Optional[int]) -> None:
        rng = self.open.pop(id(frame), None)
        if rng is not None:
            rng.__exit__(None, None, None)
        if line is not None:
            rng = torch.autograd.profiler.record_function(f"{_RANGE}{line}")
            rng.__enter__()
            self.open[id(frame)] = rng

    def global_trace(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and os.path.realpath(frame.f_code.co_filename) == self.task_file:
            return self.local_trace
        return None

    def local_trace(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self._switch(frame, frame.f_lineno)
        elif event == "return":
            self._switch(frame, None)
        return self.local_trace


def _self_time_us(evt: Any, on_gpu: bool) -> float:
    if on_gpu:
        for attr in ("self_device_time_total", "self_cuda_time_total"):
            if hasattr(evt, attr):
                return float(getattr(evt, attr))
        return 0.0
    return float(evt.self_cpu_time_total)


def _user_line(evt: Any) -> Optional[int]:
    e = getattr(evt, "cpu_parent", None)
    while e is not None:
        if e.name.startswith(_RANGE):
            return int(e.name[len(_RANGE):])
        e = getattr(e, "cpu_parent", None)
    return None


def profile_reference(task: Task, device: torch.device, params: dict[str, Any]) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile

    seed = int(params.get("seed", 0))
    iterations = max(1, int(params.get("iterations", 5)))
    model = task.instantiate(device, seed)
    inputs = task.inputs(seed, device)
    on_gpu = device.type == "cuda"
    for _ in range(2):
        task.forward(model, inputs)  # warm-up: first-call allocations and library handles stay out
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    tracer = _LineRanges(os.path.realpath(task.path))
    try:
        with profile(activities=activities, record_shapes=True) as prof, torch.no_grad():
            previous = sys.gettrace()
            sys.settrace(tracer.global_trace)
            try:
                for _ in range(iterations):
                    model(*inputs)
            finally:
                sys.settrace(previous)
            if on_gpu:
                torch.cuda.synchronize()
    except Exception as exc:
        raise from_exception("task_forward_error", exc, (task.path,), "profiling the reference") from exc
    with open(task.path, encoding="utf-8", errors="replace") as f:
        source_lines = f.read().splitlines()
    per_line: dict[Optional[int], dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for evt in prof.events():
        if not str(getattr(evt, "device_type", "CPU")).endswith("CPU") or evt.name.startswith(_RANGE) or evt.name in _PROFILER_OWN:
            continue  # kernel rows: their time is already in the launching op's self device time
        t = _self_time_us(evt, on_gpu)
        if t <= 0:
            continue
        slot = per_line[_user_line(evt)][evt.name]
        slot[0] += t / iterations
        slot[1] += 1
    total = sum(v[0] for ops in per_line.values() for v in ops.values())
    lines = []
    for line, ops in per_line.items():
        if line is None:
            continue
        t = sum(v[0] for v in ops.values())
        lines.append({"file": task.path, "line": line, "code": source_lines[line - 1].strip() if 0 < line <= len(source_lines) else "",
                      "timeUs": t, "share": t / total if total else 0.0,
                      "ops": sorted(({"name": n, "timeUs": v[0], "calls": round(v[1] / iterations, 2)} for n, v in ops.items()),
                                    key=lambda o: -o["timeUs"])})
    lines.sort(key=lambda l: -l["timeUs"])
    outside = per_line.get(None, {})
    return {"timeKind": "gpu" if on_gpu else "cpu", "unit": "us per forward", "iterations": iterations,
            "totalUs": total, "lines": lines,
            "unattributed": {"timeUs": sum(v[0] for v in outside.values()), "ops": sorted(outside)}}
