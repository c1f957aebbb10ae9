"""Output comparison: shapes, dtypes, devices, allclose with the dtype's tolerance, and NaN/Inf
that the reference does not have. Tolerances are data (defaults below, overridable per job) and
are always echoed in the verdict."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Optional

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

    @property
    def ok(self) -> bool:
        return self.shape_ok and self.dtype_ok and self.device_ok and self.close and not self.nan_inf_introduced

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def compare(actual: torch.Tensor, expected: torch.Tensor, overrides: Optional[dict[str, Any]] = None) -> Comparison:
    atol, rtol = tolerance_for(expected.dtype, overrides)
    spec = lambda t: {"shape": list(t.shape), "dtype": dtype_name(t.dtype), "device": str(t.device)}  # noqa: E731
    shape_ok = tuple(actual.shape) == tuple(expected.shape)
    dtype_ok = actual.dtype == expected.dtype
    device_ok = actual.device == expected.device
    if not shape_ok:
        return Comparison(False, dtype_ok, device_ok, False, False, float("inf"), float("inf"), expected.numel(),
                          expected.numel(), atol, rtol, spec(expected), spec(actual))
    a = actual.detach().to(device=expected.device, dtype=torch.float64)
    e = expected.detach().to(torch.float64)
    e_finite = torch.isfinite(e)
    a_finite = torch.isfinite(a)
    nan_inf_introduced = bool((~a_finite & e_finite).any())
    both_nan = torch.isnan(a) & torch.isnan(e)
    same_inf = ~e_finite & ~torch.isnan(e) & (a == e)
    diff = (a - e).abs()
    allowed = atol + rtol * e.abs()
    bad = ~(both_nan | same_inf | (e_finite & a_finite & (diff <= allowed)))
    finite = e_finite & a_finite
    max_abs = float(diff[finite].max()) if bool(finite.any()) else 0.0
    rel = diff[finite] / e[finite].abs().clamp_min(1e-12)
    max_rel = float(rel.max()) if rel.numel() else 0.0
    mismatched = int(bad.sum())
    return Comparison(True, dtype_ok, device_ok, mismatched == 0, nan_inf_introduced, max_abs, max_rel,
                      mismatched, expected.numel(), atol, rtol, spec(expected), spec(actual))
