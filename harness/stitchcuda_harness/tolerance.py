"""Output comparison: shapes, dtypes, devices, allclose with the dtype's tolerance, and NaN/Inf
that the reference does not have. Tolerances are data (defaults below, overridable per job) and
are always echoed in the verdict."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterator, Optional

import torch

from .tensor_specs import dtype_name

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
}


def tolerance_for(dtype: torch.dtype, overrides: Optional[dict[str, Any]] = None) -> tuple[float, float]:
    """(atol, rtol). `overrides` may give {"atol", "rtol"} for every float dtype and/or
    {"<dtype>": {"atol", "rtol"}} per dtype; integer and bool outputs compare exactly."""
    name = dtype_name(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0.0, 0.0
    atol, rtol = DEFAULT_TOLERANCES.get(name, (1e-4, 1e-4))
    o = overrides or {}
    atol = float(o.get("atol", atol))
    rtol = float(o.get("rtol", rtol))
    per = o.get(name) or {}
    return float(per.get("atol", atol)), float(per.get("rtol", rtol))


# Comparisons run over slices of this many elements: a slice's float64 temporaries are 128 MB
# each, so a multi-GB output (KernelBench's 4096 x 393216) never needs a full-size float64 copy.
CHUNK_ELEMENTS = 1 << 24

# KernelBench's own check (torch.allclose, fp32): reported beside the job's tolerance, never failing.
KERNELBENCH_TOLERANCE = 1e-4


@dataclass
class Comparison:
    shape_ok: bool
    dtype_ok: bool
    device_ok: bool
    close: bool
    nan_inf_introduced: bool
    max_abs_err: float
    max_rel_err: float
    mismatched: int
    numel: int
    atol: float
    rtol: float
    expected: dict[str, Any]
    actual: dict[str, Any]
    strict_mismatched: int = 0  # elements outside torch.allclose(atol=rtol=1e-4), NaN never equal

    @property
    def ok(self) -> bool:
        return self.shape_ok and self.dtype_ok and self.device_ok and self.close and not self.nan_inf_introduced

    @property
    def same_values(self) -> bool:
        """Close, whatever the devices or dtypes: for the verifier's own comparisons between runs."""
        return self.shape_ok and self.close and not self.nan_inf_introduced

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def pieces(*tensors: torch.Tensor, limit: int = CHUNK_ELEMENTS) -> Iterator[list[torch.Tensor]]:
    """Matching flat slices of same-shaped tensors, at most about `limit` elements each. Contiguous
    tensors are sliced as flat views; otherwise along dim 0, so only a slice is ever copied."""
    first = tensors[0]
    if first.dim() == 0 or all(t.is_contiguous() for t in tensors):
        flats = [t.reshape(-1) for t in tensors]
        for s in range(0, max(1, first.numel()), limit):
            yield [f[s:s + limit] for f in flats]
        return
    per_row = max(1, first.numel() // max(1, first.shape[0]))
    step = max(1, limit // per_row)
    for s in range(0, first.shape[0], step):
        yield [t[s:s + step].reshape(-1) for t in tensors]


def _work_device(*tensors: torch.Tensor) -> torch.device:
    """Where a comparison computes: on the GPU when either side is there (the verifier keeps
    huge trial results on the CPU and compares them slice by slice on the GPU)."""
    for t in tensors:
        if t.device.type == "cuda":
            return t.device
    return tensors[0].device


def compare(actual: torch.Tensor, expected: torch.Tensor, overrides: Optional[dict[str, Any]] = None,
            limit: int = CHUNK_ELEMENTS, equal_nan: bool = True) -> Comparison:
    """Slice by slice (no full-size float64 temporaries). `equal_nan=False` is torch.allclose's
    default, which KernelBench uses: NaN where both sides have it still counts as a mismatch."""
    atol, rtol = tolerance_for(expected.dtype, overrides)
    spec = lambda t: {"shape": list(t.shape), "dtype": dtype_name(t.dtype), "device": str(t.device)}  # noqa: E731
    shape_ok = tuple(actual.shape) == tuple(expected.shape)
    dtype_ok = actual.dtype == expected.dtype
    device_ok = actual.device == expected.device
    if not shape_ok:
        return Comparison(False, dtype_ok, device_ok, False, False, float("inf"), float("inf"), expected.numel(),
                          expected.numel(), atol, rtol, spec(expected), spec(actual), expected.numel())
    work = _work_device(actual, expected)
    kb = KERNELBENCH_TOLERANCE
    # Per-slice results stay on the device and are read once at the end: one sync, not one per slice.
    introduced, max_abs, max_rel, bad, strict_bad = [], [], [], [], []
    zero = torch.zeros((), dtype=torch.float64, device=work)
    for pa, pe in pieces(actual.detach(), expected.detach(), limit=limit):
        a = pa.to(device=work, dtype=torch.float64)
        e = pe.to(device=work, dtype=torch.float64)
        e_finite, a_finite = torch.isfinite(e), torch.isfinite(a)
        finite = e_finite & a_finite
        introduced.append((~a_finite & e_finite).any())
        same_inf = ~e_finite & ~torch.isnan(e) & (a == e)
        diff = (a - e).abs()
        e_abs = e.abs()
        within = finite & (diff <= atol + rtol * e_abs)
        same_nan = torch.isnan(a) & torch.isnan(e) if equal_nan else torch.zeros_like(within)
        bad.append((~(within | same_inf | same_nan)).sum())
        strict_bad.append((~((finite & (diff <= kb + kb * e_abs)) | same_inf)).sum())
        diff = torch.where(finite, diff, zero)
        max_abs.append(diff.max() if diff.numel() else zero)
        rel = torch.where(finite, diff / e_abs.clamp_min(1e-12), zero)
        max_rel.append(rel.max() if rel.numel() else zero)
        del a, e, diff, rel, e_abs, within, same_inf, same_nan, finite, e_finite, a_finite
    mismatched = int(torch.stack(bad).sum()) if bad else 0
    return Comparison(True, dtype_ok, device_ok, mismatched == 0, bool(torch.stack(introduced).any()) if introduced else False,
                      float(torch.stack(max_abs).max()) if max_abs else 0.0, float(torch.stack(max_rel).max()) if max_rel else 0.0,
                      mismatched, expected.numel(), atol, rtol, spec(expected), spec(actual),
                      int(torch.stack(strict_bad).sum()) if strict_bad else 0)


@dataclass
class TruthComparison:
    """design §7's second rule: no element of the candidate is further from the fp64 truth than the
    reference's furthest element, plus the tolerance: |cand - truth| <= max|ref - truth| + atol +
    rtol*|truth| wherever the plain rule fails; both sides' max abs error against the truth.
    The bound is the reference's worst error, not its error at the same element: two TF32
    computations round differently element by element, so a candidate exactly as accurate as eager
    overall (or ten times more accurate) would otherwise fail wherever eager happens to be close.
    With the truth on a sample of rows (`rows` of `of_rows` along dim 0, where the whole truth does
    not fit the GPU), the rule holds on those rows, and every other element may differ from eager by
    no more than the rule lets a sampled one: twice eager's worst error there, plus the tolerance."""
    passed: bool
    mismatched: int
    candidate_err: float
    reference_err: float
    rows: Optional[int] = None
    of_rows: Optional[int] = None


def compare_with_truth(actual: torch.Tensor, expected: torch.Tensor, truth: torch.Tensor, atol: float, rtol: float,
                       limit: int = CHUNK_ELEMENTS, rows: Optional[torch.Tensor] = None) -> TruthComparison:
    if rows is not None:
        return _compare_with_sampled_truth(actual, expected, truth, atol, rtol, limit, rows)
    work = _work_device(actual, expected, truth)
    zero = torch.zeros((), dtype=torch.float64, device=work)

    def slices() -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
        for pa, pe, pt in pieces(actual.detach(), expected.detach(), truth.detach(), limit=limit):
            a, e, t = (p.to(device=work, dtype=torch.float64) for p in (pa, pe, pt))
            yield a, e, t, torch.isfinite(a) & torch.isfinite(e) & torch.isfinite(t)

    # Two passes over the slices: the reference's worst error first, then each element against it.
    ref_err = [torch.where(finite, (e - t).abs(), zero).max() if e.numel() else zero for _, e, t, finite in slices()]
    worst = torch.stack(ref_err).max() if ref_err else zero
    bad, cand_err = [], []
    for a, e, t, finite in slices():
        da = (a - t).abs()
        plain = finite & ((a - e).abs() <= atol + rtol * e.abs())
        truth_ok = finite & (da <= worst + atol + rtol * t.abs())
        same_nan = torch.isnan(a) & torch.isnan(e)
        bad.append((~(plain | truth_ok | same_nan)).sum())
        cand_err.append(torch.where(finite, da, zero).max() if da.numel() else zero)
        del a, e, t, da, plain, truth_ok, finite
    mismatched = int(torch.stack(bad).sum()) if bad else 0
    return TruthComparison(mismatched == 0, mismatched, float(torch.stack(cand_err).max()) if cand_err else 0.0,
                           float(worst))


def _compare_with_sampled_truth(actual: torch.Tensor, expected: torch.Tensor, truth: torch.Tensor, atol: float,
                                rtol: float, limit: int, rows: torch.Tensor) -> TruthComparison:
    picked = [t.detach().index_select(0, rows.to(t.device)) for t in (actual, expected)]
    sampled = compare_with_truth(picked[0], picked[1], truth, atol, rtol, limit)
    del picked
    # What the rule allows on the sampled rows, as a distance from eager: both eager and the
    # candidate may be eager's worst error off the truth, in opposite directions.
    elsewhere = compare(actual, expected, {"atol": atol + 2 * sampled.reference_err, "rtol": rtol}, limit)
    mismatched = sampled.mismatched + elsewhere.mismatched
    return TruthComparison(mismatched == 0, mismatched, sampled.candidate_err, sampled.reference_err,
                           int(rows.numel()), int(actual.shape[0]))


def tensors_equal(a: torch.Tensor, b: torch.Tensor, limit: int = CHUNK_ELEMENTS) -> bool:
    """torch.equal without a full-size temporary (the input-mutation check on multi-GB inputs)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    work = _work_device(a, b)
    return all(bool(torch.equal(pa.to(work), pb.to(work))) for pa, pb in pieces(a.detach(), b.detach(), limit=limit))


def summary(t: torch.Tensor, limit: int = CHUNK_ELEMENTS) -> dict[str, Any]:
    """abs max, std and a fingerprint of one output, slice by slice: enough to tell a reference
    that is (near-)zero, constant, or the same for every seed without keeping earlier outputs.
    Slices are merged with Chan's parallel variance (a sum of squares cancels badly at 1e9 elements)."""
    n, mean, m2, abs_max, total = 0, 0.0, 0.0, 0.0, 0.0
    for (p,) in pieces(t.detach(), limit=limit):
        x = p.to(torch.float64)
        k = x.numel()
        if not k:
            continue
        mk = float(x.mean())
        m2k = float(((x - mk) ** 2).sum())
        delta = mk - mean
        m2 += m2k + delta * delta * n * k / (n + k)
        mean += delta * k / (n + k)
        n += k
        total += float(x.sum())
        abs_max = max(abs_max, float(x.abs().max()))
    head = next(pieces(t.detach(), limit=64))[0][:64]
    return {"abs_max": abs_max, "std": (m2 / (n - 1)) ** 0.5 if n > 1 else 0.0,
            "fingerprint": (total, m2, tuple(head.double().cpu().tolist()))}
