"""Inputs for correctness trials: the task's own seeded get_inputs(), and one trial drawn from a
different distribution so a task whose inputs are all non-negative cannot be passed by
`return x` (design §7). Also the allocator poisoning that makes "fresh memory" hold NaN."""
from __future__ import annotations

from typing import Any

import torch


def redistribute(inputs: list[Any], seed: int) -> tuple[list[Any], str]:
    """Same shapes and dtypes, other values: randn if every float input was non-negative,
    otherwise randn scaled by 3 and shifted by 0.5 (other range, other mean)."""
    floats = [v for v in inputs if isinstance(v, torch.Tensor) and v.is_floating_point() and v.numel()]
    nonneg = all(bool((v >= 0).all()) for v in floats)
    # Drawn where the inputs are, as the seeded get_inputs() trials are (task_loader.Task.inputs): a
    # multi-GB input is milliseconds of GPU time where the CPU's generator spends seconds.
    gens: dict[torch.device, torch.Generator] = {}
    out: list[Any] = []
    for v in inputs:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            if v.device not in gens:
                gens[v.device] = torch.Generator(device=v.device).manual_seed(seed + 7919)
            gen = gens[v.device]
            r = torch.randn(v.shape, generator=gen, dtype=torch.float32, device=v.device)
            r = r if nonneg else r * 3 + 0.5
            out.append(r.to(dtype=v.dtype))
        else:
            out.append(v)
    return out, "randn" if nonneg else "randn*3+0.5"


def poison_allocator(specs: list[tuple[list[int], torch.dtype]], device: torch.device) -> None:
    """Allocate blocks the size of the expected outputs, fill them with NaN (or the dtype's max)
    and free them: the caching allocator hands these blocks to the candidate's next allocations,
    so an output it never writes reads as garbage instead of a stale reference result."""
    if device.type != "cuda":
        return
    blocks = []
    for shape, dtype in specs:
        t = torch.empty(shape, dtype=dtype, device=device)
        if dtype.is_floating_point:
            t.fill_(float("nan"))
        elif dtype != torch.bool:
            t.fill_(torch.iinfo(dtype).max)
        blocks.append(t)
    del blocks


def poison_tensors(tensors: list[torch.Tensor]) -> None:
    """Overwrite the judge's reference outputs before freeing them, so no later allocation of the
    candidate can find the reference's answer in memory."""
    for t in tensors:
        if t.is_floating_point():
            t.fill_(float("nan"))
        elif t.dtype != torch.bool:
            t.fill_(torch.iinfo(t.dtype).max)
