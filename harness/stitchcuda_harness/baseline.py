"""Eager and torch.compile timings of the reference, timed side by side by the same timer in the
same process, cached per (task file hash, GPU, torch version, timer protocol) so a verify loop
pays for torch.compile once. The verifier times eager again beside each candidate; the ratio of
torch.compile to eager taken here carries the candidate's ratio over to torch.compile."""
from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Any, Callable, Optional

import torch

from .environment_info import gpu_name
from .errors import from_exception, is_sticky_cuda_error
from .task_loader import Task
from .timer import Timer, TimerConfig


# Part of the cache key: baselines timed by an earlier timer protocol are not comparable.
TIMER_PROTOCOL = "minus_floor/3"  # 3: eager and torch.compile interleaved with each other and the floor


def cache_key(task: Task, device: torch.device) -> dict[str, str]:
    return {"taskSha256": task.sha256, "gpu": gpu_name(device), "torch": torch.__version__, "timer": TIMER_PROTOCOL}


def _cache_path(cache_dir: str, key: dict[str, str]) -> str:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return os.path.join(cache_dir, "baselines", f"{digest}.json")


def input_sets(task: Task, device: torch.device, seed: int, count: int) -> list[list[Any]]:
    return [task.inputs(seed + 1000 + i, device) for i in range(count)]


def run_baseline(task: Task, device: torch.device, params: dict[str, Any]) -> dict[str, Any]:
    cache_dir: Optional[str] = params.get("cacheDir")
    key = cache_key(task, device)
    path = _cache_path(cache_dir, key) if cache_dir else None
    want_compile = bool(params.get("compile", True))
    if path and os.path.isfile(path) and not params.get("refresh"):
        with open(path) as f:
            cached = json.load(f)
        # Eager timed alone (the loop's first timing, before the first verified candidate) serves a request
        # without torch.compile only; one with it times both again, side by side.
        if cached.get("compile") is not None or not want_compile:
            return {**cached, "cached": True}
    seed = int(params.get("seed", 0))
    timer = Timer(device, TimerConfig.from_params(params.get("timer", {})))
    sets = input_sets(task, device, seed, int(params.get("inputSets", 4)))
    model = task.instantiate(device, seed)
    task.forward(model, sets[0])  # surfaces forward errors with file:line before timing
    compiled, compile_info = _compile(task, model, sets, device) if want_compile else (None, None)
    fns = {"eager": model} if compiled is None else {"eager": model, "compile": compiled}
    try:
        stats = timer.measure_side_by_side(fns, sets)
    except Exception as exc:
        if compiled is None:
            raise
        if is_sticky_cuda_error(exc):
            raise from_exception("cuda_sticky_error", exc, (task.path,), "eager and torch.compile timing") from exc
        # Eager ran before (the forward above); this failure is torch.compile's, a fact to report.
        stats = timer.measure_side_by_side({"eager": model}, sets)
        compile_info = {"error": from_exception("compile_failed", exc, (task.path,), "torch.compile").to_json()}
    result: dict[str, Any] = {"key": key, "timer": timer.config.__dict__, "eager": stats["eager"].to_json(),
                              "compile": {**stats["compile"].to_json(), **compile_info} if "compile" in stats else compile_info}
    if path:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, path)
    return {**result, "cached": False}


def _compile(task: Task, model: torch.nn.Module, sets: list[list[Any]],
             device: torch.device) -> tuple[Optional[Callable[..., Any]], dict[str, Any]]:
    """The compiled model, run once (that is when it compiles), and what to report of it.
    torch.compile's absence or failure is a fact to report, not an error of the request."""
    if not hasattr(torch, "compile"):
        return None, {"error": {"code": "compile_unavailable", "message": f"torch {torch.__version__} has no torch.compile"}}
    try:
        compiled = torch.compile(model)
        t0 = time.perf_counter()
        with torch.no_grad():
            compiled(*sets[0])
        if device.type == "cuda":
            torch.cuda.synchronize()
    except Exception as exc:
        if is_sticky_cuda_error(exc):
            raise from_exception("cuda_sticky_error", exc, (task.path,), "torch.compile baseline") from exc
        return None, {"error": from_exception("compile_failed", exc, (task.path,), "torch.compile").to_json()}
    return compiled, {"compileSeconds": time.perf_counter() - t0}
