"""One PyTorch-profiler timeline of a forward pass, exported as chrome-trace JSON for the host's
trace parser (profiling/TorchTrace): every kernel with its launch (correlation id), the operator
that launched it, the source line that was executing (`stitchcuda.line:N` ranges, opened by the
same line tracer as profileReference) and each iteration's span (`stitchcuda.iteration:K`).
The host derives per-kernel and per-operator GPU time, launch gaps, idle share, CPU overhead and
the kernel -> operator -> line mapping from it; this module only records."""
from __future__ import annotations

import os
import sys
from typing import Any

import torch

from .errors import HarnessError, from_exception
from .profile_reference import _LineRanges
from .profile_subject import load_subject
from .task_loader import Task

ITERATION_RANGE = "stitchcuda.iteration:"


def profile_trace(task: Task, device: torch.device, params: dict[str, Any]) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile

    out = params.get("out")
    if not isinstance(out, str) or not out:
        raise HarnessError("invalid_params", "missing param 'out' (the chrome-trace file to write)")
    seed = int(params.get("seed", 0))
    iterations = max(1, int(params.get("iterations", 3)))
    subject = load_subject(task, device, seed, params.get("candidate"), params.get("cacheDir"), params.get("arch"))
    on_gpu = device.type == "cuda"
    with torch.no_grad():
        for _ in range(2):
            subject.model(*subject.inputs)  # warm-up: allocations, library handles, autotuning stay out
    if on_gpu:
        torch.cuda.synchronize()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    tracer = _LineRanges(subject.source_file)
    try:
        with profile(activities=activities) as prof, torch.no_grad():
            for i in range(iterations):
                with torch.autograd.profiler.record_function(f"{ITERATION_RANGE}{i}"):
                    previous = sys.gettrace()
                    sys.settrace(tracer.global_trace)
                    try:
                        subject.model(*subject.inputs)
                    finally:
                        sys.settrace(previous)
                    if on_gpu:
                        torch.cuda.synchronize()  # inside the range: the iteration ends when its GPU work does
    except HarnessError:
        raise
    except Exception as exc:
        raise from_exception("task_forward_error", exc, (subject.source_file,), f"profiling the {subject.kind}") from exc
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    prof.export_chrome_trace(out)
    return {"trace": os.path.abspath(out), "subject": subject.kind, "sourceFile": subject.source_file,
            "iterations": iterations, "device": str(device), "torch": torch.__version__,
            "lineRange": "stitchcuda.line:", "iterationRange": ITERATION_RANGE}
