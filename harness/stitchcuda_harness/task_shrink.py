"""Reduced sizes for tasks that do not fit the machine (the CPU coverage bench: KernelBench inputs
reach 6.4 GB, its whole models run big batches, and Debian's CPU PyTorch multiplies matrices with a
generic BLAS at 1-3 GFLOP/s). One general rule, never a per-task table:

The sizes of a KernelBench task are module-level integers (`batch_size = 4096`, `dim = 393216`,
`input_shape = (32768,)`, `layers = [3, 4, 23, 3]`) that `get_inputs()` / `get_init_inputs()` read
when called. The task is measured at its sizes without computing anything: its factories
(`torch.randn`, `torch.empty`, ... and so every parameter) are sent to the `meta` device and one
forward runs there, counting the ATen operators, the bytes each one writes, the FLOPs of the
matmuls and convolutions, and the seconds the forward would take on this CPU (from a matmul's and a
convolution's rate measured once per process). While a measure is over its budget (DEFAULT_BUDGETS),
one size is halved and the task measured again:

- batch sizes first (a name containing "batch", or `bs`), down to 1; then the largest other
  integer above 16 (ints of 16 or less are kernel sizes, strides, groups: never touched), down to
  16, an odd size staying odd; elements of int tuples and lists count as sizes too;
- a halving that makes the model raise (a shape that no longer divides, a pooling that runs out
  of pixels), or that reduces no measure over its budget (a batch size when only the operator
  count is over), is undone and retried once together with every other size of the same value
  (sizes a task ties together: a batch that must equal a feature count); if that fails too, the
  size is left alone from then on;
- when no size is left to halve the task keeps the sizes reached, and says which budget it is
  still over.

An operator without a meta kernel (max_pool3d in torch 1.13, `.item()`) runs on the CPU over zeros
of its inputs' shapes. Where the meta device cannot run the task at all, the forward is measured
on the CPU instead, once the inputs and parameters fit their budgets, and stopped before a matmul
or convolution that would take it past the time budget. A task that raises at its original sizes
is left as it is: the load then reports the error itself.

Decisions are cached per (file, content, budgets) in the process, so `loadTask` and
`captureGraph` of one task measure once."""
from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from . import op_registry

DEFAULT_BUDGETS: dict[str, float] = {
    "inputBytes": 64 * 2**20,       # what get_inputs() returns
    "parameterBytes": 1024 * 2**20,  # parameters and buffers (architectures fix most of them)
    "forwardBytes": 512 * 2**20,     # every tensor one forward writes: the capture keeps them all
    "seconds": 2.0,                  # one forward on this CPU: estimated from the rates below, or timed
    "operators": 2000,               # ATen operators in one forward (an RNN unrolled over time)
}
_OPERATOR_SECONDS = 50e-6  # the harness's own cost per operator (dispatch, capture)
SMALL_INT = 16
_MAX_STEPS = 96
_BATCH = re.compile(r"batch|^bs$|^n_batch$", re.IGNORECASE)
_FACTORIES = {torch.randn, torch.rand, torch.randint, torch.empty, torch.zeros, torch.ones, torch.full,
              torch.arange, torch.eye, torch.linspace, torch.tensor, torch.normal, torch.randperm,
              torch.empty_strided, torch.logspace, torch.tril_indices, torch.triu_indices}
_cache: dict[tuple[str, str, str], tuple[dict[str, Any], dict[str, Any]]] = {}


@dataclass
class Measure:
    basis: str = "meta"
    inputBytes: int = 0
    parameterBytes: int = 0
    forwardBytes: Optional[int] = None  # None: the forward was not run (inputs over budget)
    flops: Optional[float] = None
    operators: Optional[int] = None
    seconds: Optional[float] = None  # estimated on the meta device, timed on the CPU

    def over(self, budgets: dict[str, float]) -> list[str]:
        return [k for k, limit in budgets.items() if (getattr(self, k, None) or 0) > limit]


class _ForwardFailed(Exception):
    def __init__(self, measure: Measure) -> None:
        super().__init__("the forward raised")
        self.measure = measure


class _OnMeta(TorchFunctionMode):
    """Factories without a device argument (or with the CPU's) allocate on the meta device."""
    enabled = True

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        if _OnMeta.enabled and func in _FACTORIES and str(kwargs.get("device") or "cpu").startswith("cpu"):
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


def _numel(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _flops(schema: Any, args: Any, outputs: list[torch.Tensor]) -> tuple[float, str]:
    """Multiply-adds counted twice for matmuls and convolutions, one per written element otherwise;
    and what computes them on the CPU: "blas" (matmuls, and transposed convolutions, which PyTorch's
    CPU build runs as a GEMM), "conv" (the oneDNN convolutions) or "other". The operands are found
    by the schema's argument names, so a GEMM or convolution the registry adds needs no list here."""
    name = schema.name.split("::")[-1]
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if name in _GEMMS and outputs:
        # The add forms take their accumulator first: the product's left matrix is then mat1 or batch1.
        left = _position(schema, ("mat1", "batch1"), 0)
        a = args[left] if left < len(args) else None
        if len(tensors) >= 2 and isinstance(a, torch.Tensor) and a.dim() >= 2:
            return 2.0 * outputs[0].numel() * a.shape[-1], "blas"
    if name in _CONVOLUTIONS and len(tensors) >= 2 and outputs:
        x, w = tensors[0], tensors[1]
        # slow_conv_transpose2d/3d carry no `transposed` argument: their name says it.
        at = _position(schema, ("transposed",), len(args))
        transposed = bool(args[at]) if at < len(args) else "transpose" in name
        per = _numel(w.shape[1:])  # in-channels per group (out-channels per group when transposed) x window
        return 2.0 * (x.numel() if transposed else outputs[0].numel()) * per, "blas" if transposed else "conv"
    return float(sum(t.numel() for t in outputs)), "other"


def _position(schema: Any, names: tuple[str, ...], default: int) -> int:
    """The position of the schema's first argument called one of `names`, else `default`."""
    return next((i for i, a in enumerate(schema.arguments) if a.name in names), default)


_GEMMS = op_registry.names("gemm")
_CONVOLUTIONS = op_registry.names("convolution")
_rates_cache: dict[str, float] = {}


def _rates() -> dict[str, float]:
    """This CPU's speed, measured once per process with PyTorch's current thread count: FLOP/s of a
    matmul (generic BLAS builds run 1-3 GFLOP/s) and of a convolution, and bytes/s written."""
    if not _rates_cache:
        _OnMeta.enabled = False
        try:
            with torch.no_grad():
                a, b = torch.rand(64, 1024), torch.rand(1024, 1024)
                x, w = torch.rand(2, 32, 64, 64), torch.rand(32, 32, 3, 3)
                big = torch.rand(1 << 22)
                for _ in range(2):  # the first run warms up
                    t0 = time.perf_counter()
                    torch.mm(a, b)
                    blas = 2.0 * 64 * 1024 * 1024 / max(time.perf_counter() - t0, 1e-6)
                    t0 = time.perf_counter()
                    y = torch.nn.functional.conv2d(x, w)
                    conv = 2.0 * y.numel() * 32 * 9 / max(time.perf_counter() - t0, 1e-6)
                    t0 = time.perf_counter()
                    big + 1.0
                    write = 4.0 * (1 << 22) / max(time.perf_counter() - t0, 1e-6)
            _rates_cache.update(blas=blas, conv=conv, write=write)
        finally:
            _OnMeta.enabled = True
    return _rates_cache


_HEAVY = _GEMMS | _CONVOLUTIONS
_MATERIALIZE_LIMIT = 1 << 30  # bytes an operator without a meta kernel may be given for real


class _Stop(Exception):
    """A CPU forward stopped before an operator that would take it past the time budget."""


def _map(value: Any, fn: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


class _Counter(TorchDispatchMode):
    """Counts one forward's operators, written bytes and FLOPs. On the meta device an operator
    without a meta kernel (max_pool3d in torch 1.13) runs on the CPU over zeros of its inputs'
    shapes. On the CPU each matmul or convolution is first sized on the meta device, and the
    forward stops before one that would pass the time budget."""

    def __init__(self, meta: bool, seconds_budget: float) -> None:
        super().__init__()
        self.meta = meta
        self.seconds_budget = seconds_budget
        self.rates = _rates()
        self.counting = False
        self.operators = 0
        self.bytes = 0
        self.flops = 0.0
        self.seconds = 0.0  # estimated from the rates

    def cost(self, flops: float, kind: str, written: int) -> float:
        compute = flops / self.rates[kind] if kind in self.rates else 0.0
        return compute + written / self.rates["write"] + _OPERATOR_SECONDS

    def _on_cpu(self, func: Any, args: Any, kwargs: dict[str, Any], error: Exception) -> Any:
        if _bytes(_tensors(list(args)) + _tensors(list(kwargs.values()))) > _MATERIALIZE_LIMIT:
            raise error
        _OnMeta.enabled = False
        try:
            real = _map((args, kwargs), lambda t: torch.zeros(t.shape, dtype=t.dtype) if t.device.type == "meta" else t)
            out = func(*real[0], **real[1])
            return _map(out, lambda t: torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta"))
        finally:
            _OnMeta.enabled = True

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        schema = func._schema
        name = schema.name.split("::")[-1]
        if self.meta:
            try:
                out = func(*args, **kwargs)
            except NotImplementedError as exc:
                out = self._on_cpu(func, args, kwargs, exc)
        else:
            if self.counting and name in _HEAVY:
                try:
                    sized = _tensors(func(*_map(args, lambda t: t.to("meta")), **_map(kwargs, lambda t: t.to("meta"))))
                    estimate = self.cost(*_flops(schema, args, sized), _bytes(sized))
                except Exception:
                    estimate = 0.0
                if self.seconds + estimate > self.seconds_budget:
                    self.seconds += estimate
                    raise _Stop()
            out = func(*args, **kwargs)
        if not self.counting:
            return out
        results = out if isinstance(out, (list, tuple)) else [out]
        written = []
        for i, r in enumerate(results):
            if isinstance(r, torch.Tensor):
                alias = schema.returns[i].alias_info if i < len(schema.returns) else None
                if alias is None:
                    written.append(r)
        flops, kind = _flops(schema, args, written)
        self.operators += 1
        self.bytes += _bytes(written)
        self.flops += flops
        self.seconds += self.cost(flops, kind, _bytes(written))
        return out


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _bytes(tensors: list[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _measure(task: Any, meta: bool, budgets: dict[str, float]) -> Measure:
    """One forward's sizes at the module's current globals. Raises what the task raises."""
    m = Measure("meta" if meta else "cpu")
    mode = _OnMeta() if meta else None
    counter = _Counter(meta, budgets["seconds"])
    if mode is not None:
        mode.__enter__()
    try:
        with counter:  # not counting yet: only for the operators without a meta kernel
            init = list(task.get_init_inputs())
            torch.manual_seed(0)
            model = task.model_cls(*init)
            inputs = task.get_inputs()
        m.inputBytes = _bytes(_tensors(list(inputs)))
        m.parameterBytes = _bytes(list(model.parameters()) + list(model.buffers()))
        if not meta and (m.inputBytes > budgets["inputBytes"] or m.parameterBytes > budgets["parameterBytes"]):
            return m  # the forward waits until its inputs fit
        counter.counting = True
        t0 = time.perf_counter()
        try:
            with torch.no_grad(), counter:
                model(*inputs)
        except _Stop:
            pass  # over the time budget: what was counted so far is enough to say so
        except Exception as exc:
            raise _ForwardFailed(m) from exc
        m.seconds = counter.seconds if meta or counter.seconds > counter.seconds_budget else time.perf_counter() - t0
        m.forwardBytes = m.inputBytes + m.parameterBytes + counter.bytes
        m.flops = counter.flops
        m.operators = counter.operators
        return m
    finally:
        if mode is not None:
            mode.__exit__(None, None, None)


def _sizes(module_dict: dict[str, Any]) -> list[tuple[str, Optional[int]]]:
    """The module's size candidates in definition order: (name, None) for an int, (name, i) for
    the i-th element of an int tuple or list."""
    out: list[tuple[str, Optional[int]]] = []
    for name, value in list(module_dict.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            out.append((name, None))
        elif isinstance(value, (tuple, list)) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            out.extend((name, i) for i in range(len(value)))
    return out


def _key(size: tuple[str, Optional[int]]) -> str:
    return size[0] if size[1] is None else f"{size[0]}[{size[1]}]"


def _get(d: dict[str, Any], size: tuple[str, Optional[int]]) -> int:
    name, i = size
    return d[name] if i is None else d[name][i]


def _set(d: dict[str, Any], size: tuple[str, Optional[int]], value: int) -> None:
    name, i = size
    if i is None:
        d[name] = value
    else:
        items = list(d[name])
        items[i] = value
        d[name] = type(d[name])(items)


def _halved(size: tuple[str, Optional[int]], value: int) -> Optional[int]:
    if _BATCH.search(size[0]) and size[1] is None:
        return value // 2 if value > 1 else None
    if value <= SMALL_INT:
        return None
    new = max(SMALL_INT, value // 2)
    if value % 2 and not new % 2 and new > SMALL_INT:
        new += 1  # an odd size stays odd: an irregular shape is what the task tests
    return new if new < value else None


def _next(d: dict[str, Any], sizes: list[tuple[str, Optional[int]]], frozen: set[str]) -> Optional[tuple[str, Optional[int]]]:
    live = [s for s in sizes if _key(s) not in frozen and _halved(s, _get(d, s)) is not None]
    batch = [s for s in live if _BATCH.search(s[0]) and s[1] is None]
    if batch:
        return batch[0]
    return max(live, key=lambda s: _get(d, s), default=None)  # max keeps the first of equals


def _measure_any(task: Any, budgets: dict[str, float], meta_only: bool) -> Measure:
    """Meta first; the CPU where the meta device cannot run the forward, and only once the inputs
    and parameters fit (a forward too large for the meta device is not allocated for real).
    `meta_only`: the task ran on the meta device at its own sizes, so a failure there now is the
    model raising at these sizes."""
    if meta_only:
        return _measure(task, True, budgets)
    try:
        return _measure(task, True, budgets)
    except _ForwardFailed as failed:
        pre: Optional[Measure] = failed.measure
    except Exception:
        pre = None
    if pre is not None and (pre.inputBytes > budgets["inputBytes"] or pre.parameterBytes > budgets["parameterBytes"]):
        return pre
    return _measure(task, False, budgets)


def _reduces(before: Measure, after: Measure, over: list[str]) -> bool:
    for k in over:
        b, a = getattr(before, k), getattr(after, k)
        if a is None and b is not None:
            continue
        if b is None or a is None or a < 0.98 * b:
            return True
    return False


def shrink_task(task: Any, module_dict: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Halves the module's sizes in place until the task fits `options` (budgets, see
    DEFAULT_BUDGETS); returns what it did, for the task's summary."""
    budgets = {**DEFAULT_BUDGETS, **{k: float(v) for k, v in options.items() if k in DEFAULT_BUDGETS}}
    key = (task.path, task.sha256, json.dumps(budgets, sort_keys=True))
    sizes = _sizes(module_dict)
    if key in _cache:
        assigned, report = _cache[key]
        module_dict.update(assigned)
        return report
    original = {_key(s): _get(module_dict, s) for s in sizes}
    report: dict[str, Any] = {"budgets": budgets, "changed": {}, "sizes": original, "overBudget": []}
    t0 = time.perf_counter()
    try:
        m = _measure_any(task, budgets, False)
    except Exception as exc:  # raises at its own sizes: nothing to shrink, the load says why
        cause = exc.__cause__ if isinstance(exc, _ForwardFailed) and exc.__cause__ else exc
        report["error"] = f"{type(cause).__name__}: {cause}"[:500]
        _cache[key] = ({}, report)
        return report
    frozen: set[str] = set()
    steps = 0
    while m.over(budgets) and steps < _MAX_STEPS:
        size = _next(module_dict, sizes, frozen)
        if size is None:
            break
        steps += 1
        # The size alone, then with every size of the same value: sizes a task ties together
        # (a batch that must equal a feature count, a sequence and its maximum) shrink together.
        value = _get(module_dict, size)
        tied = [s for s in sizes if _key(s) not in frozen and _get(module_dict, s) == value and s != size]
        for group in ([size], [size] + tied) if tied else ([size],):
            saved = {s[0]: module_dict[s[0]] for s in group}
            for s in group:
                new = _halved(s, _get(module_dict, s))
                if new is not None:
                    _set(module_dict, s, new)
            try:
                after: Optional[Measure] = _measure_any(task, budgets, m.basis == "meta" and m.operators is not None)
            except Exception:
                after = None
            if after is not None and _reduces(m, after, m.over(budgets)):
                m = after
                break
            module_dict.update(saved)
        else:
            frozen.add(_key(size))
    final = {_key(s): _get(module_dict, s) for s in sizes}
    report["sizes"] = final
    report["changed"] = {k: [original[k], v] for k, v in final.items() if v != original[k]}
    report["overBudget"] = m.over(budgets)
    report["measure"] = {k: v for k, v in asdict(m).items() if v is not None}
    report["steps"] = steps
    report["cpuRates"] = {k: round(v) for k, v in _rates().items()}
    report["seconds"] = round(time.perf_counter() - t0, 3)
    assigned = {s[0]: module_dict[s[0]] for s in sizes}
    _cache[key] = (assigned, report)
    return report
