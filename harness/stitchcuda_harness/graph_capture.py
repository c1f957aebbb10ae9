"""ATen-level graph capture by running the model once under a TorchDispatchMode: every ATen op
that reaches the dispatcher is recorded with real shapes, dtypes and strides, the innermost frame
of the user's file, and the module path from forward hooks. Running for real (rather than
tracing symbolically) works the same on torch 1.13 and 2.x and never guesses a shape."""
from __future__ import annotations

import os
import sys
from typing import Any, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .errors import from_exception, is_out_of_memory
from .graph_ir import Graph, Node, SourceRef, TensorValue, Uncovered
from .ground_truth import ROWS_INDEPENDENT_REL
from .model_source import argument_text, constant_literal, construction_source, python_literal
from .module_loader import read_source
from .stage_deadline import stage
from .task_loader import Task, check_tensor_outputs
from .tensor_specs import dtype_name

# Ops whose presence makes a static program impossible or non-reproducible; the planner must
# know about them instead of receiving a graph that silently lacks them.
_UNCOVERED_OPS = {
    "aten::_local_scalar_dense": "reads a tensor value on the host (.item()/int()/bool()): data-dependent control flow",
    "aten::nonzero": "output shape depends on data",
    "aten::bernoulli": "random: results differ between runs",
    "aten::native_dropout": "random (dropout in training mode): results differ between runs",
    "aten::rand": "random: results differ between runs",
    "aten::randn": "random: results differ between runs",
    "aten::normal": "random: results differ between runs",
    "aten::uniform_": "random: results differ between runs",
}


class _Recorder(TorchDispatchMode):
    def __init__(self, graph: Graph, task_file: str, module_stack: list[str]) -> None:
        super().__init__()
        self.graph = graph
        self.task_file = os.path.realpath(task_file)
        self.module_stack = module_stack
        self.ids: dict[int, str] = {}
        self.keep: list[torch.Tensor] = []  # holds every seen tensor so id() values stay unique

    def register(self, t: torch.Tensor, role: str, name: Optional[str] = None,
                 producer: Optional[int] = None, view_of: Optional[str] = None) -> str:
        tid = f"t{len(self.graph.tensors)}"
        self.graph.tensors.append(TensorValue(tid, list(t.shape), dtype_name(t.dtype), list(t.stride()),
                                              t.storage_offset(), str(t.device), role, name, producer, view_of))
        self.ids[id(t)] = tid
        self.keep.append(t)
        return tid

    def lookup(self, t: torch.Tensor, op: str) -> str:
        tid = self.ids.get(id(t))
        if tid is None:
            tid = self.register(t, "constant")
            self.graph.tensors[-1].py = constant_literal(t)
            # A small constant written as Python is made again where it is needed (or read as a
            # number by a generated kernel): only one that cannot be is a gap in the capture.
            if self.graph.tensors[-1].py is None:
                self.graph.uncovered.append(Uncovered(op, f"tensor {tid} has no recorded producer (created outside "
                                                          "ATen, e.g. by a C++ extension or a global); captured as a "
                                                          "constant", self.source()))
        return tid

    def source(self) -> Optional[SourceRef]:
        frame = sys._getframe(1)
        while frame is not None:
            if os.path.realpath(frame.f_code.co_filename) == self.task_file:
                return SourceRef(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
            frame = frame.f_back
        return None

    def encode(self, name: str, value: Any, op: str) -> dict[str, Any]:
        """An argument as the planner reads it; a non-tensor one also as Python source (`py`), so a
        node left in PyTorch can be issued again exactly as captured."""
        out = self._encode(name, value, op)
        if "value" in out:
            out["py"] = python_literal(value)
        return out

    def _encode(self, name: str, value: Any, op: str) -> dict[str, Any]:
        if isinstance(value, torch.Tensor):
            return {"name": name, "tensor": self.lookup(value, op)}
        if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            return {"name": name, "tensors": [self.lookup(v, op) if isinstance(v, torch.Tensor) else None for v in value]}
        if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
            return {"name": name, "value": str(value).replace("torch.", "")}
        if isinstance(value, (list, tuple)):
            return {"name": name, "value": [v if isinstance(v, (int, float, bool)) or v is None else str(v) for v in value]}
        if value is None or isinstance(value, (int, float, bool, str)):
            return {"name": name, "value": value}
        return {"name": name, "value": argument_text(value)}

    @staticmethod
    def aliased_argument(schema: Any, alias: Any, args: Any, kwargs: dict[str, Any]) -> Any:
        """The argument a view or in-place result aliases, matched by the schema's alias set."""
        for i, a in enumerate(schema.arguments):
            if a.alias_info is not None and set(a.alias_info.before_set) & set(alias.before_set):
                if a.name in kwargs:
                    return kwargs[a.name]
                return args[i] if i < len(args) else None
        return None

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        schema = func._schema
        op = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        arg_names = [a.name for a in schema.arguments]
        inputs = [self.encode(arg_names[i] if i < len(arg_names) else f"arg{i}", v, op) for i, v in enumerate(args)]
        inputs += [{**self.encode(k, v, op), "keyword": True} for k, v in kwargs.items()]
        out = func(*args, **kwargs)
        src = self.source()
        if schema.name in _UNCOVERED_OPS:
            self.graph.uncovered.append(Uncovered(op, _UNCOVERED_OPS[schema.name], src))
        node_id = len(self.graph.nodes)
        results = out if isinstance(out, (list, tuple)) else [out]
        outputs: list[str] = []
        positions: Optional[list[int]] = [] if isinstance(out, (list, tuple)) else None
        kind = "compute"
        for i, r in enumerate(results):
            if not isinstance(r, torch.Tensor):
                continue
            if positions is not None:
                positions.append(i)
            alias = schema.returns[i].alias_info if i < len(schema.returns) else None
            view_of = None
            if alias is not None:
                kind = "inplace" if alias.is_write else "view"
                base = self.aliased_argument(schema, alias, args, kwargs)
                if isinstance(base, torch.Tensor):
                    view_of = self.lookup(base, op)
            outputs.append(self.register(r, "intermediate", None, node_id, view_of))
        module = ".".join(p for p in self.module_stack if p)
        self.graph.nodes.append(Node(node_id, op, inputs, outputs, kind, module, src, positions))
        return out


def _tensor_attributes(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The model's tensors held as plain attributes, neither parameters nor buffers (a recurrent
    cell's `self.hidden = torch.randn(...)`), by dotted name: forward may read and rebind them."""
    found: dict[str, torch.Tensor] = {}
    for prefix, sub in model.named_modules():
        for attr, v in vars(sub).items():
            if isinstance(v, torch.Tensor):
                found[f"{prefix}.{attr}" if prefix else attr] = v
    return found


def _record_forward(model: torch.nn.Module, inputs: list[Any], graph: Graph, task_file: str, stage_name: str) -> Any:
    """Runs the forward once under a recorder that fills `graph` (its inputs, parameters, buffers,
    tensor attributes, nodes, outputs and the attributes it rebinds) and returns the forward's
    outputs; the forward's exception as a task_forward_error. `stage_name` names the forward where
    its deadline passes."""
    stack: list[str] = []
    recorder = _Recorder(graph, task_file, stack)
    for i, v in enumerate(inputs):
        if isinstance(v, torch.Tensor):
            graph.inputs.append(recorder.register(v, "input", f"inputs[{i}]"))
        else:
            graph.input_values[str(i)] = python_literal(v)
    for name, p in model.named_parameters():
        recorder.register(p, "parameter", name)
    for name, b in model.named_buffers():
        recorder.register(b, "buffer", name)
    attributes = _tensor_attributes(model)
    for name, a in attributes.items():
        if id(a) not in recorder.ids:
            recorder.register(a, "attribute", name)
    handles = []
    for name, sub in model.named_modules():
        # Hooks must return None: a value returned from a hook replaces the module's input/output.
        handles.append(sub.register_forward_pre_hook(lambda _m, _i, n=name: None if stack.append(n) else None))
        handles.append(sub.register_forward_hook(lambda _m, _i, _o: None if stack.pop() else None))
    try:
        try:
            with torch.no_grad(), recorder, stage(stage_name, (task_file,)):
                out = model(*inputs)
        except Exception as exc:
            raise from_exception("task_forward_error", exc, (task_file,), "capturing the graph") from exc
        outputs = check_tensor_outputs(out, task_file, None, "task")
        for t in outputs:
            graph.outputs.append(recorder.ids.get(id(t)) or recorder.lookup(t, "output"))
        # State the forward leaves for the next call: what it rebound a tensor attribute to.
        for name, a in _tensor_attributes(model).items():
            if attributes.get(name) is not a:
                graph.state.append({"name": name, "tensor": recorder.ids.get(id(a)) or recorder.lookup(a, "state")})
        # An attribute it only reads that Python can write out (a 0-dim `torch.tensor(0.5)`, which
        # stays on the CPU beside CUDA tensors) is a constant, read by a kernel as a number.
        rebound = {s["name"] for s in graph.state}
        for t in graph.tensors:
            py = constant_literal(attributes[t.name]) if t.role == "attribute" and t.name not in rebound else None
            if py is not None:
                t.role, t.py = "constant", py
    finally:
        for h in handles:
            h.remove()
        recorder.keep.clear()  # the recorded intermediates: what runs next needs their memory
    return outputs


def capture_graph(task: Task, device: torch.device, seed: int = 0) -> Graph:
    model = task.instantiate(device, seed)
    inputs = task.inputs(seed, device)
    graph = Graph(task=task.path, device=str(device), torch=torch.__version__)
    graph.construction = construction_source(read_source(task.path), task.names.model_class,
                                             {task.names.inputs_fn, task.names.init_inputs_fn or ""})
    outputs = _record_forward(model, inputs, graph, task.path, task.forward_stage("graph capture"))
    graph.batch = batch_probe(model, inputs, outputs, seed, task.path)
    return graph


def _row_differences(a: torch.Tensor, b: torch.Tensor) -> tuple[float, float]:
    """max |a - b| and max |a| in fp64, a few rows at a time (a multi-GB output has no room for
    fp64 copies of itself)."""
    err = scale = 0.0
    if not a.numel():  # rows of no elements (a [B, 0] output) agree
        return err, scale
    step = max(1, (1 << 24) // a[0].numel())
    for r in range(0, a.shape[0], step):
        x, y = a[r:r + step].double(), b[r:r + step].double()
        err = max(err, (x - y).abs().max().item())
        scale = max(scale, x.abs().max().item())
    return err, scale


def batch_probe(model: torch.nn.Module, inputs: list[Any], outputs: list[torch.Tensor], seed: int,
                task_file: str = "") -> Optional[dict[str, Any]]:
    """Whether the forward computes each row of a common batch dimension (dim 0 of every tensor
    input and output) from that row alone: the first half of the batch is run again and its outputs
    compared with the whole batch's first rows. A generated program for B rows then serves any
    batch size in chunks of B rows (the program's loader). That second forward is recorded too: where
    the rows are independent, "graph" is its graph (the same operators at half the rows), from which
    the planner tells which numbers of a generated program scale with the batch. None where there
    is no common dim 0."""
    tensors = [v for v in inputs if isinstance(v, torch.Tensor)]
    sizes = {t.shape[0] if t.dim() else None for t in tensors + outputs}
    if not tensors or len(sizes) != 1 or None in sizes:
        return None
    rows = next(iter(sizes))
    if rows < 2:
        return {"size": rows, "rows_independent": False, "why": "one row: nothing to compare"}
    half = rows // 2
    halved = [v[:half] if isinstance(v, torch.Tensor) else v for v in inputs]
    graph: Optional[Graph] = Graph(task=task_file, device=str(tensors[0].device), torch=torch.__version__)
    try:
        torch.manual_seed(seed)
        again = _record_forward(model, halved, graph, task_file, f"{type(model).__name__}.forward (batch probe, {half} rows)")
    except Exception as recorded:
        # A forward that needs the whole batch (a view with the batch size written in) raises again
        # unrecorded; one out of memory may not, as recording holds every intermediate.
        cause = recorded.__cause__ or recorded
        if not is_out_of_memory(cause):
            return {"size": rows, "rows_independent": False, "why": f"the forward on {half} rows raised {type(cause).__name__}"}
        graph = None
        try:
            torch.manual_seed(seed)
            with torch.no_grad(), stage(f"{type(model).__name__}.forward (batch probe, {half} rows)", (task_file,)):
                again = check_tensor_outputs(model(*halved), "", None, "task")
        except Exception as exc:
            return {"size": rows, "rows_independent": False, "why": f"the forward on {half} rows raised {type(exc).__name__}"}
    for i, (whole, part) in enumerate(zip(outputs, again)):
        if tuple(part.shape) != (half, *whole.shape[1:]):
            return {"size": rows, "rows_independent": False, "why": f"output {i} on {half} rows has shape {tuple(part.shape)}"}
        err, scale = _row_differences(whole[:half], part)
        if not err <= ROWS_INDEPENDENT_REL * scale + 1e-6:  # NaN: not independent
            return {"size": rows, "rows_independent": False,
                    "why": f"output {i}'s first {half} rows change with the other rows (by {err:.3g}, magnitude {scale:.3g})"}
    probe = {"size": rows, "rows_independent": True, "why": f"the first {half} rows alone give the same outputs"}
    if graph is not None:
        probe["graph"] = graph.to_json()
    return probe
