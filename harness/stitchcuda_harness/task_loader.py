"""Loading a task: a KernelBench file (`Model`, `get_inputs`, `get_init_inputs`) or a plain
nn.Module file whose model class and input factory are named by a directive comment
(`# stitchcuda: model=MyNet inputs=make_inputs init=make_init`) or by request params."""
from __future__ import annotations

import contextlib
import inspect
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

from .errors import HarnessError, from_exception
from .module_loader import file_sha256, load_module, read_source
from .stage_deadline import stage
from .tensor_specs import flatten_tensors, tensor_spec, to_device, value_spec

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*stitchcuda:[ \t]*(?P<body>.*)$", re.MULTILINE)
_DIRECTIVE_KEYS = {"model": "model_class", "inputs": "inputs_fn", "init": "init_inputs_fn"}


@dataclass
class TaskNames:
    model_class: str = "Model"
    inputs_fn: str = "get_inputs"
    init_inputs_fn: Optional[str] = "get_init_inputs"
    format: str = "kernelbench"
    directive_line: Optional[int] = None


@dataclass
class Task:
    path: str
    sha256: str
    names: TaskNames
    model_cls: type
    get_inputs: Callable[[], Any]
    get_init_inputs: Callable[[], Any]
    shrink: Optional[dict[str, Any]] = None  # the reduced sizes, when loaded with the `shrink` param
    forwarded: bool = False  # a forward has finished: the next is not the first (the stage's name says which)

    def instantiate(self, device: torch.device, seed: int) -> torch.nn.Module:
        """Seed, then construct: the candidate is built the same way so equal seeds give equal
        weights (how KernelBench compares models)."""
        init = self.init_inputs(seed)
        torch.manual_seed(seed)
        try:
            with stage(f"{self.names.model_class}.__init__", (self.path,)):
                model = self.model_cls(*init)
        except Exception as exc:
            raise from_exception("task_init_error", exc, (self.path,), f"{self.names.model_class}.__init__") from exc
        if not isinstance(model, torch.nn.Module):
            raise HarnessError("task_not_module", f"{self.names.model_class} is not an nn.Module", self.path, _line_of(self.model_cls))
        return _to_device(model, device, self.path)

    def init_inputs(self, seed: int) -> list[Any]:
        torch.manual_seed(seed)
        try:
            with stage(f"{self.init_name()}()", (self.path,)):
                return list(self.get_init_inputs())
        except Exception as exc:
            raise from_exception("task_inputs_error", exc, (self.path,), "get_init_inputs()") from exc

    def inputs(self, seed: int, device: torch.device) -> list[Any]:
        """The task's inputs for `seed`, on `device`. On a GPU the factory functions draw them there
        (torch.device as the default device, PyTorch 2.x): a 6.4 GB input is a few milliseconds of
        GPU time where the CPU spent seconds, for every trial and input set. The values come from
        the GPU's generator, seeded the same way; KernelBench's own protocol
        (kernelbench_protocol.py) still draws on the CPU as it does."""
        torch.manual_seed(seed)
        on_device = device.type == "cuda" and hasattr(torch.device, "__enter__")
        try:
            with (device if on_device else contextlib.nullcontext()), stage(f"{self.names.inputs_fn}()", (self.path,)):
                values = self.get_inputs()
        except Exception as exc:
            raise from_exception("task_inputs_error", exc, (self.path,), f"{self.names.inputs_fn}()") from exc
        if not isinstance(values, (list, tuple)):
            raise HarnessError("task_inputs_error", f"{self.names.inputs_fn}() must return a list, got {type(values).__name__}",
                               self.path, _line_of(self.get_inputs))
        return [to_device(v, device) for v in values]

    def forward(self, model: torch.nn.Module, inputs: list[Any]) -> list[torch.Tensor]:
        """Run the reference and check its outputs are tensors (a tuple/list of them is fine)."""
        try:
            with torch.no_grad(), stage(self.forward_stage(), (self.path,)):
                out = model(*inputs)
        except Exception as exc:
            raise from_exception("task_forward_error", exc, (self.path,), f"{self.names.model_class}.forward") from exc
        self.forwarded = True
        return check_tensor_outputs(out, self.path, _line_of(getattr(self.model_cls, "forward", self.model_cls)), "task")

    def forward_stage(self, purpose: str = "") -> str:
        """The stage name of a forward of the model: the first one, or a later one and what for."""
        name = ("the first " if not self.forwarded else "") + f"{self.names.model_class}.forward"
        return f"{name} ({purpose})" if purpose else name

    def init_name(self) -> str:
        return self.names.init_inputs_fn or "get_init_inputs"


def check_tensor_outputs(out: Any, path: str, line: Optional[int], role: str) -> list[torch.Tensor]:
    items = list(out) if isinstance(out, (list, tuple)) else [out]
    bad = [type(v).__name__ for v in items if not isinstance(v, torch.Tensor)]
    if bad or not items:
        raise HarnessError(f"{role}_non_tensor_output",
                           f"forward must return a tensor or a tuple of tensors, got {type(out).__name__}"
                           + (f" holding {', '.join(bad)}" if bad else ""), path, line)
    return flatten_tensors(items)


def _line_of(obj: Any) -> Optional[int]:
    try:
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return None


def _to_device(model: torch.nn.Module, device: torch.device, path: str) -> torch.nn.Module:
    try:
        return model.to(device)
    except Exception as exc:
        raise from_exception("task_init_error", exc, (path,), "moving the model to " + str(device)) from exc


def parse_names(source: str, params: dict[str, Any]) -> TaskNames:
    names = TaskNames()
    for m in _DIRECTIVE.finditer(source):
        names.format = "directive"
        names.directive_line = source.count("\n", 0, m.start()) + 1
        for token in m.group("body").split():
            key, _, value = token.partition("=")
            if key in _DIRECTIVE_KEYS and value:
                setattr(names, _DIRECTIVE_KEYS[key], value)
    for param, attr in (("modelClass", "model_class"), ("inputsFn", "inputs_fn"), ("initInputsFn", "init_inputs_fn")):
        if params.get(param):
            names.format = "params"
            setattr(names, attr, params[param])
    return names


def load_task(path: str, params: Optional[dict[str, Any]] = None) -> Task:
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise HarnessError("file_not_found", f"no such task file: {path}", path)
    names = parse_names(read_source(path), params or {})
    with stage(f"importing {os.path.basename(path)}", (path,)):
        module = load_module(path, "task")

    def need(name: str) -> Any:
        value = getattr(module, name, None)
        if value is None:
            hint = " (name yours with a '# stitchcuda: model=MyModel inputs=make_inputs' comment in the file)"
            raise HarnessError("task_missing_name", f"{os.path.basename(path)} defines no '{name}'{hint}",
                               path, names.directive_line or 1)
        return value

    model_cls = need(names.model_class)
    if not (inspect.isclass(model_cls) and issubclass(model_cls, torch.nn.Module)):
        raise HarnessError("task_not_module", f"'{names.model_class}' is not an nn.Module subclass", path, _line_of(model_cls))
    get_inputs = need(names.inputs_fn)
    init_name = names.init_inputs_fn
    get_init = getattr(module, init_name, None) if init_name else None
    if get_init is None:
        get_init = list  # no init factory: the model takes no constructor arguments
    task = Task(path, file_sha256(path), names, model_cls, get_inputs, get_init)
    shrink = (params or {}).get("shrink")
    if shrink:  # true, or budgets: the module's sizes halved until the task fits (task_shrink.py)
        from .task_shrink import shrink_task
        task.shrink = shrink_task(task, module.__dict__, shrink if isinstance(shrink, dict) else {})
    return task


def summarize(task: Task, device: torch.device, seed: int = 0) -> dict[str, Any]:
    """Load-time facts, found by building the model and running it once (this is where errors
    in __init__ and forward surface, with their file and line). `precision` is PyTorch's precision
    flags as the reference runs with them, read after the task module ran (it may set them): the
    built-in brain runs each library call in eager's precision for it (design §7)."""
    from .runtime_guards import precision_state
    model = task.instantiate(device, seed)
    inputs = task.inputs(seed, device)
    outputs = task.forward(model, inputs)
    params = list(model.parameters())
    return {
        "path": task.path,
        "sha256": task.sha256,
        "format": task.names.format,
        "modelClass": task.names.model_class,
        "inputsFn": task.names.inputs_fn,
        "initInputsFn": task.names.init_inputs_fn,
        "device": str(device),
        "initInputs": [value_spec(v) for v in task.init_inputs(seed)],
        "inputs": [value_spec(v) for v in inputs],
        "outputs": [tensor_spec(t) for t in outputs],
        "parameters": {"count": len(params), "elements": sum(p.numel() for p in params),
                       "bytes": sum(p.numel() * p.element_size() for p in params)},
        "forwardLine": _line_of(getattr(task.model_cls, "forward", task.model_cls)),
        "precision": precision_state(),
        **({"shrink": task.shrink} if task.shrink is not None else {}),
    }
