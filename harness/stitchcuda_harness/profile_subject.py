"""The model a profiler looks at: the reference task's `Model`, or a candidate's `ModelNew` built
like the verifier builds it (fast-path `.cu` compiled and injected, constructed under the same seed;
nothing copied from the reference). Profiling comes after VERIFY, so no guards run here: only a
candidate that already passed them is profiled."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

import torch

from .candidate_files import resolve_candidate
from .errors import HarnessError, from_exception
from .module_loader import load_module
from .task_loader import Task


@dataclass
class Subject:
    model: torch.nn.Module
    inputs: list[Any]
    source_file: str  # the file whose lines the profile is attributed to
    kind: str         # "reference" | "candidate"


def load_subject(task: Task, device: torch.device, seed: int, candidate: Optional[str] = None,
                 cache_dir: Optional[str] = None, arch: Optional[str] = None) -> Subject:
    inputs = task.inputs(seed, device)
    if candidate is None:
        return Subject(task.instantiate(device, seed), inputs, os.path.realpath(task.path), "reference")
    files = resolve_candidate(candidate)
    library = None
    if files.cuda:
        from .nvcc_build import DEFAULT_CACHE_DIR, Builder
        cache = cache_dir or DEFAULT_CACHE_DIR
        build = Builder(cache, arch).build(files.cuda)
        if not build.ok:
            first = build.first_error()
            raise HarnessError("build_error", first.message if first else "nvcc failed", files.cuda, first.line if first else None)
        library = build.library
    module = load_module(files.python, "candidate", {"__stitch_library__": library} if library else None)
    cls = getattr(module, "ModelNew", None)
    if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        raise HarnessError("candidate_layout", "the candidate defines no nn.Module named ModelNew", files.python)
    init = task.init_inputs(seed)
    torch.manual_seed(seed)
    try:
        model = cls(*init).to(device)
    except Exception as exc:
        raise from_exception("task_init_error", exc, (files.python,), "ModelNew.__init__") from exc
    # Nothing is copied from the reference: built under its seed, a verified ModelNew holds its weights.
    return Subject(model, inputs, os.path.realpath(files.python), "candidate")
