"""Per-operator GPU time of the reference through the PyTorch profiler, mapped to the lines of
the user's file that launched each operator (it feeds the editor's hovers). On a machine with no
GPU the same table holds CPU time and says so.

Lines are found by a line tracer that opens a profiler range `stitchcuda.line:N` for each line
executed in the task file; every op is attributed to its innermost such range. The profiler's own
stacks are not used: torch 1.13 reports the function's first line there, not the calling line.
Each line lists the operators the line itself calls (`aten::linear`, `aten::add`), each with the time
of everything it runs inside (`aten::addmm`, the `aten::to` that wraps a Python scalar): the editor's
hover names what the user wrote, not PyTorch's internals."""
from __future__ import annotations

import os
import sys
from collections import defaultdict
from typing import Any, Optional

import torch

from .errors import from_exception
from .stage_deadline import stage
from .task_loader import Task

_RANGE = "stitchcuda.line:"
_PROFILER_OWN = {"Activity Buffer Request"}  # the profiler's own bookkeeping, not the model's work


def _profiler_own(name: str) -> bool:
    return name in _PROFILER_OWN or name.startswith("profiler::")


class _LineRanges:
    """sys.settrace hook: one open record_function range per task-file frame, moved line by line."""

    def __init__(self, task_file: str) -> None:
        self.task_file = task_file
        self.open: dict[int, Any] = {}

    def _switch(self, frame: Any, line: Optional[int]) -> None:
        # The profiler's range ops themselves, not torch.autograd.profiler.record_function: on torch
        # 1.13 that one allocates tensors (torch.zeros, a handle) which the profile would count as the
        # line's own operators.
        rng = self.open.pop(id(frame), None)
        if rng is not None:
            torch.ops.profiler._record_function_exit._RecordFunction(rng)
        if line is not None:
            self.open[id(frame)] = torch.ops.profiler._record_function_enter_new(f"{_RANGE}{line}", None)

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


def _recorded_calls(prof: Any) -> dict[int, tuple[str, Optional[int], str, bool]]:
    """Each CPU operator's name, the user's line it ran under, the operator that line called which
    it is part of, and whether that is the operator itself, keyed by the operator's id, read off the
    op tree the profiler recorded. The events' own `cpu_parent` is rebuilt from whole-microsecond
    times, and a child whose start and length are each truncated can seem to end after its parent:
    relu's clamp_min then showed as an operator of the line, once in two calls.

    One walk down the tree carries each node's line and call to its children: ids are not followed
    upwards, since only operators have ids of their own (a GPU kernel shares its launch's, other
    events may all read 0). An id seen twice is left out; those operators, and every operator where
    the profiler keeps no tree, are placed by the events' parents instead."""
    try:
        roots = prof.profiler.kineto_results.experimental_event_tree()
        op_tag = torch._C._profiler._EventType.TorchOp
    except (AttributeError, RuntimeError):
        return {}
    calls: dict[int, tuple[str, Optional[int], str, bool]] = {}
    seen_twice: set[int] = set()
    # (node, the innermost line range above it, the outermost operator below that range)
    stack: list[tuple[Any, Optional[int], Optional[str]]] = [(node, None, None) for node in roots]
    while stack:
        node, line, call = stack.pop()
        if node.name.startswith(_RANGE):
            line, call = int(node.name[len(_RANGE):]), None
        elif getattr(node, "tag", op_tag) == op_tag:
            key = node.correlation_id
            if key in calls:
                seen_twice.add(key)
            calls[key] = (node.name, line, call or node.name, call is None)
            call = call or node.name
        stack.extend((child, line, call) for child in node.children)
    for key in seen_twice:
        del calls[key]
    return calls


def _line_and_call(evt: Any, recorded: dict[int, tuple[str, Optional[int], str, bool]]) -> tuple[Optional[int], str, bool]:
    """The user's line `evt` ran under, the name of the operator that line called which `evt` is part
    of (`evt` itself, or its outermost enclosing operator below the line's range), and whether that
    operator is `evt` itself."""
    mine = recorded.get(evt.id)
    if mine is not None and mine[0] == evt.name:
        return mine[1], mine[2], mine[3]
    call, e = evt, getattr(evt, "cpu_parent", None)
    while e is not None:
        if e.name.startswith(_RANGE):
            return int(e.name[len(_RANGE):]), call.name, call is evt
        call, e = e, getattr(e, "cpu_parent", None)
    return None, call.name, call is evt


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
                with stage(task.forward_stage(f"profiling, {iterations} calls"), (task.path,)):
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
    recorded = _recorded_calls(prof)
    for evt in prof.events():
        if not str(getattr(evt, "device_type", "CPU")).endswith("CPU") or evt.name.startswith(_RANGE) or _profiler_own(evt.name):
            continue  # kernel rows: their time is already in the launching op's self device time
        line, call, own = _line_and_call(evt, recorded)
        slot = per_line[line][call]
        slot[0] += max(0.0, _self_time_us(evt, on_gpu)) / iterations
        slot[1] += 1 if own else 0
    for ops in per_line.values():
        for name in [n for n, v in ops.items() if v[0] <= 0]:
            del ops[name]  # no time of its own or inside it: nothing to show
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
