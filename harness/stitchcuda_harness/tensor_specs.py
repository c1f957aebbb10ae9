"""JSON descriptions of tensors and other values, shared by task summaries, graphs and verdicts."""
from __future__ import annotations

from typing import Any

import torch


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def tensor_spec(t: torch.Tensor) -> dict[str, Any]:
    return {
        "shape": list(t.shape),
        "dtype": dtype_name(t.dtype),
        "strides": list(t.stride()),
        "device": str(t.device),
    }


def value_spec(v: Any) -> dict[str, Any]:
    """A JSON-safe description of any argument or result (tensors by spec, scalars by value)."""
    if isinstance(v, torch.Tensor):
        return {"kind": "tensor", **tensor_spec(v)}
    if isinstance(v, bool) or v is None:
        return {"kind": "scalar", "value": v}
    if isinstance(v, (int, float)):
        return {"kind": "scalar", "value": v if v == v and abs(v) != float("inf") else str(v)}
    if isinstance(v, str):
        return {"kind": "scalar", "value": v}
    if isinstance(v, (list, tuple)):
        return {"kind": "list", "items": [value_spec(x) for x in v]}
    if isinstance(v, (torch.dtype, torch.device, torch.memory_format, torch.layout)):
        return {"kind": "scalar", "value": str(v)}
    return {"kind": "other", "type": type(v).__name__}


def flatten_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        out: list[torch.Tensor] = []
        for v in value:
            out.extend(flatten_tensors(v))
        return out
    return []


def to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list):
        return [to_device(v, device) for v in value]
    if isinstance(value, tuple):
        return tuple(to_device(v, device) for v in value)
    return value


def clone_values(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, list):
        return [clone_values(v) for v in value]
    if isinstance(value, tuple):
        return tuple(clone_values(v) for v in value)
    return value
