"""The fp64 truth (design §7): the reference model run in float64 on one trial's inputs, so that a
candidate closer to the truth than eager (exact fp32 where eager's cuDNN runs TF32) is never
rejected. It costs memory (a float64 copy of the model, the inputs and the outputs), so the
verifier asks for it only where the plain comparison failed. Where the whole truth does not fit
the GPU, it is computed on a sample of rows (batch elements): the inputs' rows along dim 0, when
the model's rows are independent of each other, which the sample itself shows (eager's rows must
match it to TF32's precision). Otherwise it is skipped, with the reason."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

from .errors import is_out_of_memory, is_sticky_cuda_error
from .task_loader import check_tensor_outputs

# Rough float64 footprint of a forward: the inputs cast, the outputs, and as much again for the
# intermediates a chain of ops keeps alive. An underestimate only costs an out-of-memory, which
# is caught and reported as a skipped truth.
_INTERMEDIATES = 2
# At most this many rows in a sample, spread over the batch; the memory left decides below that.
_SAMPLE_ROWS = 8
# A sample stands for the whole batch only if eager's own rows are this close to it, relative to
# the truth's magnitude: TF32 (10-bit mantissa), reordered fp32 sums and another GEMM or convolution
# algorithm for fewer rows stay well inside it, while a model whose rows interact (batch
# statistics, a loss over the batch) misses it by far. The capture's batch probe uses it too.
ROWS_INDEPENDENT_REL = 1e-2


def to_float64(values: list[Any]) -> list[Any]:
    """A forward's arguments for its float64 run: floating-point tensors cast, the rest as given."""
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def _bytes64(values: list[Any]) -> int:
    return sum(v.numel() * 8 for v in values if isinstance(v, torch.Tensor))


@dataclass
class Truth:
    """The float64 outputs, of the whole batch (rows None) or of the rows `rows` along dim 0."""
    tensors: list[torch.Tensor]
    rows: Optional[torch.Tensor] = None
    why_sampled: str = ""


def _batch_rows(inputs: list[Any], outputs: list[torch.Tensor]) -> int:
    """The batch every output has as its dim 0 and at least one input shares; 0 if there is none."""
    n = {o.shape[0] if o.dim() else 0 for o in outputs}
    if len(n) != 1 or (rows := n.pop()) < 2:
        return 0
    return rows if any(isinstance(v, torch.Tensor) and v.dim() and v.shape[0] == rows for v in inputs) else 0


class GroundTruth:
    def __init__(self, reference: torch.nn.Module, path: str, free_bytes: Callable[[], int]) -> None:
        self.reference = reference
        self.path = path
        self.free_bytes = free_bytes
        self.model64: Optional[torch.nn.Module] = None

    def needed_bytes(self, inputs: list[Any], outputs: list[torch.Tensor]) -> int:
        model = 0 if self.model64 is not None else _bytes64(list(self.reference.parameters()) + list(self.reference.buffers()))
        return model + _bytes64(inputs) + (1 + _INTERMEDIATES) * _bytes64(outputs)

    def outputs(self, inputs: list[Any], outputs: list[torch.Tensor]) -> tuple[Optional[Truth], str]:
        """(truth, "") or (None, why it was skipped)."""
        if not any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in inputs) and not any(
                p.is_floating_point() for p in self.reference.parameters()):
            return None, "no floating-point inputs or weights"
        need, free = self.needed_bytes(inputs, outputs), self.free_bytes()
        if need > free:
            return self._sampled(inputs, outputs, f"the whole truth needs about {need / 2**30:.1f} GiB, "
                                                  f"{free / 2**30:.1f} GiB free")
        try:
            if self.model64 is None:
                # A copy: the reference's own state (BatchNorm's running statistics) must move only
                # with the trials, exactly as the candidate's does.
                self.model64 = copy.deepcopy(self.reference).double()
            return Truth(self._run(self.model64, to_float64(inputs))), ""
        except Exception as exc:
            return None, self._failed(exc, need)

    def _run(self, model64: torch.nn.Module, x64: list[Any]) -> list[torch.Tensor]:
        with torch.no_grad():
            return check_tensor_outputs(model64(*x64), self.path, None, "task")

    def _failed(self, exc: Exception, need: int) -> str:
        if is_sticky_cuda_error(exc):
            raise exc
        self.release()
        if is_out_of_memory(exc):
            return f"the fp64 truth ran out of memory ({need / 2**30:.1f} GiB estimated)"
        return f"the reference failed in float64: {type(exc).__name__}: {exc}"[:300]

    def _sampled(self, inputs: list[Any], outputs: list[torch.Tensor], why_whole: str) -> tuple[Optional[Truth], str]:
        """The truth on up to _SAMPLE_ROWS rows spread over the batch, in what memory is left."""
        n = _batch_rows(inputs, outputs)
        if not n:
            return None, f"{why_whole}, and its outputs have no batch dim the inputs share to sample rows of"
        self.release()
        model = _bytes64(list(self.reference.parameters()) + list(self.reference.buffers()))
        whole = [v for v in inputs if isinstance(v, torch.Tensor) and not (v.dim() and v.shape[0] == n)]
        per_row = (self.needed_bytes(inputs, outputs) - model - _bytes64(whole)) / n
        k = min(_SAMPLE_ROWS, n, int((self.free_bytes() - model - _bytes64(whole)) // max(per_row, 1.0)))
        if k < 1:
            return None, f"{why_whole}, and not even one row fits"
        rows = torch.linspace(0, n - 1, k).round().long().unique()
        sliced = [v.index_select(0, rows.to(v.device)) if isinstance(v, torch.Tensor) and v.dim() and v.shape[0] == n
                  else v for v in inputs]
        try:
            # A fresh copy each time, dropped after: a run on some rows moves BatchNorm's running
            # statistics as the whole batch would not.
            truth = self._run(copy.deepcopy(self.reference).double(), to_float64(sliced))
        except Exception as exc:
            return None, self._failed(exc, int(per_row * k + model))
        finally:
            del sliced
        if len(truth) != len(outputs):
            return None, f"{why_whole}, and on {k} rows alone the model returns {len(truth)} outputs, not {len(outputs)}"
        for o, t in zip(outputs, truth):
            eager = o.detach().index_select(0, rows.to(o.device)).to(device=t.device, dtype=torch.float64)
            if t.shape != eager.shape:
                return None, f"{why_whole}, and on {k} rows alone the model's output has shape {list(t.shape)}"
            scale = float(t.abs().max()) if t.numel() else 0.0
            off = float((eager - t).abs().max()) if t.numel() else 0.0
            if not off <= ROWS_INDEPENDENT_REL * max(scale, 1e-30):
                return None, (f"{why_whole}, and the model's rows are not independent: on {k} rows alone its output is "
                              f"{off:.3g} from eager's rows (magnitude {scale:.3g})")
        return Truth(truth, rows, f"{why_whole}: on {k} of {n} rows"), ""

    def release(self) -> None:
        self.model64 = None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
