"""The candidate's timed calls, judged too (design §7): a candidate that counts its calls could be
right through the correctness trials and return nothing (an empty tensor, stale memory) once the
timing loop runs. The last timed call and one drawn at random are made by this sample instead of
the timer: the allocator is poisoned before each, as before a trial, and its outputs copied after;
the verifier then compares them with the reference's on the same input set by the trials' rules.
The candidate cannot tell these calls from the others (the draw is made after warm-up, from the
system's entropy)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .errors import is_out_of_memory
from .trial_inputs import poison_allocator

# Fewer timed calls than this: none is taken out of the timing to be judged.
MIN_ROUNDS = 3


@dataclass
class TimedCall:
    round_index: int
    input_set: int
    outputs: Any  # a copy of what the call returned: tensors cloned, anything else as it came


@dataclass
class TimedCalls:
    name: str  # the function of the timed rounds that is the candidate
    specs: list[tuple[list[int], torch.dtype]]  # the reference's outputs: blocks poisoned before each call
    device: torch.device
    iterations: int = 0
    calls: list[TimedCall] = field(default_factory=list)
    skipped: str = ""  # why no call was judged

    def rounds(self, iterations: int) -> set[int]:
        self.iterations = iterations
        if iterations < MIN_ROUNDS:
            self.skipped = f"{iterations} timed call(s): too few to take one out of the timing"
            return set()
        return {iterations - 1, random.SystemRandom().randrange(iterations - 1)}

    def call(self, fn: Callable[..., Any], args: list[Any], round_index: int, input_set: int) -> None:
        poison_allocator(self.specs, self.device)
        out = fn(*args)
        try:
            self.calls.append(TimedCall(round_index, input_set, _copy(out)))
        except Exception as exc:  # the copy is the judge's memory, never the candidate's fault
            if not is_out_of_memory(exc):
                raise
            self.skipped = "copying a timed call's outputs ran out of memory"


def _copy(out: Any) -> Any:
    """Taken on the current stream before any device sync, as the trials' copies are: work the
    candidate left running on another stream reads as wrong."""
    if isinstance(out, torch.Tensor):
        return torch.Tensor.clone(out.as_subclass(torch.Tensor))
    if isinstance(out, (list, tuple)):
        return [_copy(o) for o in out]
    return out
