"""Eager and torch.compile timings of the reference, by the same timer in the same process,
cached per (task file hash, GPU, torch version) so a verify loop pays for them once."""
from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Any, Optional

import torch

from .environment_info import gpu_name
from .errors import HarnessError, from_exception, is_sticky_cuda_error
from .task_loader import Task
from .timer import Timer, TimerConfig


# Part of the cache key: baselines timed by an earlier timer protocol are not comparable.
TIMER_PROTOCOL = "minus_floor/2"  # 2: the floor is measured after each warm-up


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
    if path and os.path.isfile(path) and not params.get("refresh"):
        with open(path) as f:
            return {**json.load(f), "cached": True}
    seed = int(params.get("seed", 0))
    timer = Timer(device, TimerConfig.from_params(params.get("timer", {})))
    sets = input_sets(task, device, seed, int(params.get("inputSets", 4)))
    model = task.instantiate(device, seed)
    task.forward(model, sets[0])  # surfaces forward errors with file:line before timing
    result: dict[str, Any] = {"key": key, "timer": timer.config.__dict__, "eager": timer.measure(model, sets).to_json()}
    result["compile"] = _compile_timing(task, model, timer, sets) if params.get("compile", True) else None
    if path:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, path)
    return {**result, "cached": False}


def _compile_timing(task: Task, model: torch.nn.Module, timer: Timer, sets: list[list[Any]]) -> dict[str, Any]:
    """torch.compile's absence or failure is a fact to report, not an error of the request."""
    if not hasattr(torch, "compile"):
        return {"error": {"code": "compile_unavailable", "message": f"torch {torch.__version__} has no torch.compile"}}
    try:
        compiled = torch.compile(model)
        t0 = time.perf_counter()
        with torch.no_grad():
            compiled(*sets[0])
        if timer.device.type == "cuda":
            torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        stats = timer.measure(compiled, sets)
    except Exception as exc:
        if is_sticky_cuda_error(exc):
            raise from_exception("cuda_sticky_error", exc, (task.path,), "torch.compile baseline") from exc
        err: HarnessError = from_exception("compile_failed", exc, (task.path,), "torch.compile")
        return {"error": err.to_json()}
    return {**stats.to_json(), "compileSeconds": compile_s}
