"""The built-in brain's operator registry (agents/builtin/ops), as the build exports it to ops.json
beside this file: which ATen operators exist for the host, by family and cost kind. The harness reads
its operator lists from here, never from lists of its own. Every build rewrites the file from the
registry (agents/builtin/ops/OpsJson.cmake); it stays committed so that a harness without a build
(a checkout's tests, the .vsix) has it, and tests/builtin/ops_on_cpu.py fails when it is stale."""
from __future__ import annotations

import functools
import json
import os


@functools.lru_cache(maxsize=None)
def _ops() -> tuple[dict, ...]:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops.json")) as f:
        return tuple(json.load(f)["ops"])


def names(cost: str) -> frozenset[str]:
    """The ATen base names ("addmm") whose cost kind is `cost` (elementwise, gemm, convolution)."""
    return frozenset(op["name"] for op in _ops() if op["cost"] == cost)
