"""The state ModelNew must share with Model (design §6): built under the same seed, its parameters
and buffers are the reference's, bit for bit, because nothing is copied (KernelBench builds both
models the same way and copies nothing). After the same forwards, its buffers (BatchNorm's running
statistics in training mode) must have moved as the reference's did."""
from __future__ import annotations

from typing import Any, Optional

import torch

from .tolerance import compare, compare_with_truth, tolerance_for


def _entries(model: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
    return [(k, v) for k, v in model.state_dict().items() if isinstance(v, torch.Tensor)]


def _describe(name: str, t: torch.Tensor) -> str:
    return f"'{name}' {list(t.shape)} {str(t.dtype).replace('torch.', '')}"


def construction_difference(reference: torch.nn.Module, candidate: torch.nn.Module) -> Optional[str]:
    """The first state_dict entry, in order, where ModelNew built under the reference's seed differs
    from Model; None when every parameter and buffer is equal bit for bit. Names may differ (only
    the order and values matter to anyone who builds both under one seed)."""
    ref, new = _entries(reference), _entries(candidate)
    for k, ((rn, rt), (cn, ct)) in enumerate(zip(ref, new)):
        if rt.shape != ct.shape or rt.dtype != ct.dtype:
            return f"state_dict entry {k}: ModelNew's {_describe(cn, ct)} where Model has {_describe(rn, rt)}"
        if not torch.equal(rt, ct.to(rt.device)):
            diff = (rt.double() - ct.to(rt.device).double()).abs().max() if rt.is_floating_point() else None
            return (f"state_dict entry {k}: ModelNew's '{cn}' differs from Model's '{rn}'"
                    + (f" (max abs diff {float(diff):.3g})" if diff is not None else ""))
    if len(ref) != len(new):
        extra = new[len(ref)] if len(new) > len(ref) else None
        missing = ref[len(new)] if len(ref) > len(new) else None
        return (f"ModelNew has {len(new)} state_dict entries, Model has {len(ref)}: "
                + (f"ModelNew adds {_describe(*extra)}" if extra else f"ModelNew lacks {_describe(*missing)}"))
    return None


def buffer_differences(reference: torch.nn.Module, candidate: torch.nn.Module, tolerance: Optional[dict[str, Any]],
                       truth: Optional[dict[str, torch.Tensor]] = None) -> tuple[list[str], list[str]]:
    """Buffers whose values differ after both models ran the same forwards, paired in state_dict
    order as at construction; integer buffers (num_batches_tracked) compare exactly. With `truth`
    (the reference's buffers as an fp64 copy of it moved them, by name), a float buffer outside the
    tolerance of the reference's still passes where, element by element, it is no further from
    the truth than the reference's plus the tolerance: running statistics gathered after TF32
    convolutions carry eager's own error too. Returns (mismatch messages, buffers passed by the
    truth rule)."""
    buffers = {name for name, _ in reference.named_buffers()}
    out, by_truth = [], []
    for (rn, rb), (cn, cb) in zip(_entries(reference), _entries(candidate)):
        if rn not in buffers or rb.shape != cb.shape:
            continue  # parameters do not move in a forward; a different layout was reported at construction
        c = compare(cb, rb, tolerance)
        if c.same_values:
            continue
        t = truth.get(rn) if truth and rb.is_floating_point() else None
        if t is not None and t.shape == rb.shape and compare_with_truth(cb, rb, t, *tolerance_for(rb.dtype, tolerance)).passed:
            by_truth.append(cn)
            continue
        out.append(f"buffer '{cn}' after the trials differs from Model's '{rn}': "
                   f"{c.mismatched}/{c.numel} elements, max abs err {c.max_abs_err:.3g}")
    return out, by_truth
