"""Runtime anti-hacking guards. The candidate runs in the judge's interpreter (the timer must
measure it in the same process as the reference, design §7), so what it could patch is isolated:
a snapshot of every namespace the judge relies on is taken before the candidate is imported,
compared after each candidate call (import, __init__, every forward, the timing loop) and
restored, so a patch is both reported by name and undone before the judge uses the patched name.
The judge's own primitives (timer.py) are bound at import time and never looked up again.

Also here: the thread watch and the recorder of ATen ops run on the claimed path."""
from __future__ import annotations

import _thread
import builtins
import sys
import threading
import time
import types
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch
import torch.nn.functional
from torch.utils._python_dispatch import TorchDispatchMode

from .verdict import Finding

_MISSING = object()
# The C base of torch.Tensor holds the tensor methods; torch 2.x names it TensorBase, 1.13 _TensorBase.
_TENSOR_BASE = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase")


def precision_state() -> dict[str, Any]:
    state: dict[str, Any] = {"cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
                             "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32}
    for flag in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        try:
            state[f"cuda.matmul.{flag}"] = getattr(torch.backends.cuda.matmul, flag)
        except (AttributeError, AssertionError):
            pass  # torch 1.13 lacks the bf16 flag and asserts on unknown names
    if hasattr(torch, "get_float32_matmul_precision"):
        state["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    return state


def _restore_precision(state: dict[str, Any]) -> None:
    torch.backends.cudnn.allow_tf32 = state["cudnn.allow_tf32"]
    torch.backends.cuda.matmul.allow_tf32 = state["cuda.matmul.allow_tf32"]
    for key, value in state.items():
        if key.startswith("cuda.matmul.allow_") and key != "cuda.matmul.allow_tf32":
            setattr(torch.backends.cuda.matmul, key.split(".")[-1], value)
    if "float32_matmul_precision" in state:
        torch.set_float32_matmul_precision(state["float32_matmul_precision"])


def _watched() -> list[tuple[str, Any, str]]:
    """(label, object whose __dict__ is watched, check reported when it changes)."""
    items: list[tuple[str, Any, str]] = [
        ("time", time, "patched_timer"),
        ("torch.cuda.Event", torch.cuda.Event, "patched_timer"),
        ("torch", torch, "patched_torch_function"),
        ("torch.nn.functional", torch.nn.functional, "patched_torch_function"),
        ("torch.cuda", torch.cuda, "patched_torch_function"),
        ("torch.Tensor", torch.Tensor, "patched_torch_function"),
        ("torch._C.TensorBase", _TENSOR_BASE, "patched_torch_function"),
        ("torch.nn.Module", torch.nn.Module, "patched_torch_function"),
        ("torch._C._VariableFunctions", torch._C._VariableFunctions, "patched_torch_function"),
        ("builtins", builtins, "patched_harness"),
        ("threading", threading, "patched_harness"),
    ]
    for name, module in sorted(sys.modules.items()):
        if name.startswith("stitchcuda_harness") and module is not None:
            items.append((name, module, "patched_harness"))
    return items


_TIMER_ATTRS = {"synchronize", "Event", "elapsed_time", "record", "perf_counter", "time", "monotonic"}


@dataclass
class StateSnapshot:
    namespaces: list[tuple[str, Any, str, dict[str, Any]]]
    precision: dict[str, Any]
    modules: dict[str, Any]

    @staticmethod
    def take() -> "StateSnapshot":
        spaces = [(label, obj, check, _namespace(obj)) for label, obj, check in _watched()]
        mods = {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith(("torch.", "stitchcuda_harness", "time"))}
        return StateSnapshot(spaces, precision_state(), mods)

    def check_and_restore(self, when: str, allowed_precision: set[str]) -> list[Finding]:
        """Report every change since the snapshot, then undo it."""
        findings: list[Finding] = []
        for label, obj, check, before in self.namespaces:
            now = _namespace(obj)
            is_class = isinstance(obj, type)
            for name, old in before.items():
                new = now.get(name, _MISSING)
                if new is old or _same_builtin(new, old) or not (callable(old) or isinstance(old, type)):
                    continue  # only functions and classes: lazy module state (flags, caches) changes legitimately
                if label == "builtins" and name.startswith("_"):
                    continue
                kind = "patched_timer" if (label.startswith("torch.cuda") and name in _TIMER_ATTRS) else check
                findings.append(Finding(kind, f"{label}.{name} was {'deleted' if new is _MISSING else 'replaced'} {when}", "runtime"))
                _set(obj, name, old)
            if is_class:
                for name in set(now) - set(before):
                    findings.append(Finding(check, f"{label}.{name} was added {when} (shadows inherited behaviour)", "runtime"))
                    _delete(obj, name)
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                findings.append(Finding("patched_harness" if name.startswith("stitchcuda") else "patched_torch_function",
                                        f"sys.modules[{name!r}] was replaced {when}", "runtime"))
                sys.modules[name] = module
        now_precision = precision_state()
        if now_precision != self.precision:
            changed = {k: v for k, v in now_precision.items() if self.precision.get(k) != v}
            lowered = any(v is True or v in ("high", "medium") for v in changed.values())
            if lowered and "tf32" not in allowed_precision:
                findings.append(Finding("precision_downgrade", f"precision flags changed {when}: {changed}", "runtime", data={"precision": "tf32"}))
            _restore_precision(self.precision)
        return findings


def _namespace(obj: Any) -> dict[str, Any]:
    """The object's own attributes (its __dict__, or dir() for C objects that have none)."""
    try:
        return dict(vars(obj))
    except TypeError:
        return {n: getattr(obj, n, None) for n in dir(obj) if not n.startswith("__")}


def _same_builtin(new: Any, old: Any) -> bool:
    """C objects hand out a fresh bound builtin on each attribute read; equal ones are unchanged."""
    return isinstance(old, types.BuiltinFunctionType) and isinstance(new, types.BuiltinFunctionType) and new == old


def _set(obj: Any, name: str, value: Any) -> None:
    try:
        setattr(obj, name, value)
    except (AttributeError, TypeError):
        pass  # a C type that refuses setattr could not have been patched either


def _delete(obj: Any, name: str) -> None:
    try:
        delattr(obj, name)
    except (AttributeError, TypeError):
        pass


@dataclass
class ThreadWatch:
    """Counts threads the candidate starts (Thread.start and the low-level _thread API) and
    those of them still alive after it returns: work there escapes the timed region. Only starts
    made from the thread that runs the candidate count: a thread that a thread of the process
    started earlier starts meanwhile (torch.compile's worker pool starts its `subproc_worker_timer`
    whenever its own thread gets to it) is not the candidate's, and one the candidate's own thread
    starts is counted at its root."""

    started: list[str] = field(default_factory=list)
    leftover: list[str] = field(default_factory=list)
    _threads: list[threading.Thread] = field(default_factory=list)
    _saved: tuple[Any, Any] = (None, None)

    def __enter__(self) -> "ThreadWatch":
        start, low = threading.Thread.start, _thread.start_new_thread
        self._saved = (start, low)
        watch, owner = self, threading.get_ident()

        def counted_start(thread: threading.Thread, *a: Any, **k: Any) -> Any:
            if threading.get_ident() == owner:
                watch.started.append(thread.name)
                watch._threads.append(thread)
            return start(thread, *a, **k)

        def counted_low(fn: Callable[..., Any], *a: Any, **k: Any) -> Any:
            if threading.get_ident() == owner:
                watch.started.append(getattr(fn, "__name__", "thread"))
            return low(fn, *a, **k)

        threading.Thread.start = counted_start  # type: ignore[method-assign]
        _thread.start_new_thread = counted_low
        return self

    def __exit__(self, *exc: Any) -> None:
        threading.Thread.start, _thread.start_new_thread = self._saved  # type: ignore[method-assign]
        self.leftover = [t.name for t in self._threads if t.is_alive()]

    def findings(self, when: str) -> list[Finding]:
        if not self.started and not self.leftover:
            return []
        return [Finding("extra_thread", f"candidate started host threads {when}: started={self.started} "
                                        f"still running={self.leftover}", "runtime")]


# ATen ops a candidate may run on the claimed path: allocation, metadata and views.
ALLOWED_ATEN = {
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros", "aten::zeros_like", "aten::zero_",
    "aten::fill_", "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::as_strided", "aten::t",
    "aten::transpose", "aten::permute", "aten::expand", "aten::squeeze", "aten::unsqueeze", "aten::select",
    "aten::slice", "aten::detach", "aten::alias", "aten::lift_fresh", "aten::split", "aten::unbind",
    "aten::chunk", "aten::narrow", "aten::set_", "aten::resize_", "aten::sym_size", "aten::sym_stride",
    "aten::sym_numel", "aten::sym_storage_offset", "aten::is_contiguous", "aten::stride", "aten::size",
    "aten::_reshape_alias",
}


class ComputeRecorder(TorchDispatchMode):
    """Records every ATen op the candidate's forward reaches (from Python or from C++ in a
    load_inline extension) with the candidate's line that led to it."""

    def __init__(self, files: tuple[str, ...]) -> None:
        super().__init__()
        self.files = {f for f in files}
        self.ops: Counter[str] = Counter()
        self.lines: dict[str, Optional[int]] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func._schema.name
        if name not in ALLOWED_ATEN:
            self.ops[name] += 1
            if name not in self.lines:
                self.lines[name] = self._line()
        return func(*args, **(kwargs or {}))

    def _line(self) -> Optional[int]:
        frame: Optional[types.FrameType] = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename in self.files:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def findings(self, file: str, declared: Optional[dict[str, int]] = None) -> list[Finding]:
        """One finding per operator the forward ran beyond what the candidate declares it leaves in
        PyTorch (STITCH_PYTORCH_OPS: schema name → calls per forward, a partial candidate's
        uncovered operators); `declared` is for one forward."""
        declared = declared or {}
        out = []
        for op, n in sorted(self.ops.items()):
            allowed = int(declared.get(op, 0))
            if n <= allowed:
                continue
            what = f"{n}x, {allowed} declared in STITCH_PYTORCH_OPS" if allowed else f"{n}x"
            out.append(Finding("pytorch_compute", f"forward ran PyTorch operator {op} ({what})", "runtime", file,
                               self.lines.get(op), {"op": op, "count": n, "declared": allowed}))
        return out


def storage_span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    start = storage.data_ptr()
    size = storage.nbytes() if hasattr(storage, "nbytes") else storage.size() * t.element_size()
    return start, start + size


def alias_findings(outputs: list[torch.Tensor], inputs: list[Any], params: list[torch.Tensor]) -> list[Finding]:
    """Outputs must be fresh memory: sharing storage with an input or a weight means the candidate
    returned (a view of) something it was given."""
    findings = []
    given = [("input", i, t) for i, t in enumerate(inputs) if isinstance(t, torch.Tensor)] + \
            [("parameter", i, p) for i, p in enumerate(params)]
    for k, out in enumerate(outputs):
        if out.numel() == 0:
            continue
        o0, o1 = storage_span(out)
        for kind, i, t in given:
            if t.numel() == 0 or t.device != out.device:
                continue
            s0, s1 = storage_span(t)
            if o0 < s1 and s0 < o1:
                findings.append(Finding("output_aliases_input", f"output {k} shares memory with {kind} {i}", "runtime"))
    return findings


def subclass_findings(outputs: list[torch.Tensor]) -> list[Finding]:
    return [Finding("tensor_subclass_output", f"output {k} is a {type(t).__module__}.{type(t).__qualname__}, not a plain torch.Tensor",
                    "runtime") for k, t in enumerate(outputs) if type(t) is not torch.Tensor]
