"""The fp64 truth (design §7): the reference model run in float64 on one trial's inputs, so that a
candidate closer to the truth than eager (exact fp32 where eager's cuDNN runs TF32) is never
rejected. It costs memory (a float64 copy of the model, the inputs and the outputs), so the
verifier asks for it only where the plain comparison failed, and it is skipped, with the reason,
where it cannot fit."""
from __future__ import annotations

import copy
from typing import Any, Callable, Optional

import torch

from .errors import is_out_of_memory, is_sticky_cuda_error
from .task_loader import check_tensor_outputs

# Rough float64 footprint of a forward: the inputs cast, the outputs, and as much again for the
# intermediates a chain of ops keeps alive. An underestimate only costs an out-of-memory, which
# is caught and reported as a skipped truth.
_INTERMEDIATES = 2


def to_float64(values: list[Any]) -> list[Any]:
    """A forward's arguments for its float64 run: floating-point tensors cast, the rest as given."""
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def _bytes64(values: list[Any]) -> int:
    return sum(v.numel() * 8 for v in values if isinstance(v, torch.Tensor))


class GroundTruth:
    def __init__(self, reference: torch.nn.Module, path: str, free_bytes: Callable[[], int]) -> None:
        self.reference = reference
        self.path = path
        self.free_bytes = free_bytes
        self.model64: Optional[torch.nn.Module] = None

    def needed_bytes(self, inputs: list[Any], outputs: list[torch.Tensor]) -> int:
        model = 0 if self.model64 is not None else _bytes64(list(self.reference.parameters()) + list(self.reference.buffers()))
        return model + _bytes64(inputs) + (1 + _INTERMEDIATES) * _bytes64(outputs)

    def outputs(self, inputs: list[Any], outputs: list[torch.Tensor]) -> tuple[Optional[list[torch.Tensor]], str]:
        """(truth, "") or (None, why it was skipped)."""
        if not any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in inputs) and not any(
                p.is_floating_point() for p in self.reference.parameters()):
            return None, "no floating-point inputs or weights"
        need, free = self.needed_bytes(inputs, outputs), self.free_bytes()
        if need > free:
            return None, f"the fp64 truth needs about {need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free"
        try:
            if self.model64 is None:
                # A copy: the reference's own state (BatchNorm's running statistics) must move only
                # with the trials, exactly as the candidate's does.
                self.model64 = copy.deepcopy(self.reference).double()
            x64 = to_float64(inputs)
            with torch.no_grad():
                truth = check_tensor_outputs(self.model64(*x64), self.path, None, "task")
            del x64
            return truth, ""
        except Exception as exc:
            if is_sticky_cuda_error(exc):
                raise
            self.release()
            if is_out_of_memory(exc):
                return None, f"the fp64 truth ran out of memory ({need / 2**30:.1f} GiB estimated)"
            return None, f"the reference failed in float64: {type(exc).__name__}: {exc}"[:300]

    def release(self) -> None:
        self.model64 = None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
