"""The ATen-level graph handed to the planner (schema "stitchcuda.graph/1", documented in
protocol/HARNESS.md): tensors by id with shape/dtype/strides, nodes in execution order with the
user's source line and module path, and the `uncovered` list of what the capture could not see."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

SCHEMA = "stitchcuda.graph/1"


@dataclass
class SourceRef:
    file: str
    line: int
    function: str


@dataclass
class TensorValue:
    id: str
    shape: list[int]
    dtype: str
    strides: list[int]
    storage_offset: int
    device: str
    role: str  # input | parameter | buffer | attribute (a plain tensor attribute of a module) | constant | intermediate
    name: Optional[str] = None
    producer: Optional[int] = None  # node id; None for graph inputs, parameters, constants
    view_of: Optional[str] = None   # tensor id this one aliases (views and in-place results)
    py: Optional[str] = None        # a small constant made outside ATen, as Python source (`{device}`: the inputs')


@dataclass
class Node:
    id: int
    op: str  # "aten::add.Tensor"
    inputs: list[dict[str, Any]]  # {"name", "tensor"} | {"name", "tensors"} | {"name", "value"}
    outputs: list[str]
    kind: str  # compute | view | inplace
    module: str
    source: Optional[SourceRef]
    # For an op that returns a tuple or list: each output's position in it (None: one tensor).
    result_index: Optional[list[int]] = None


@dataclass
class Uncovered:
    op: str
    reason: str
    source: Optional[SourceRef] = None


@dataclass
class Graph:
    task: str
    device: str
    torch: str
    tensors: list[TensorValue] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)  # the tensor inputs, named "inputs[i]" by position
    # The non-tensor inputs by position, as Python source: the graph holds for these values only.
    input_values: dict[str, str] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    uncovered: list[Uncovered] = field(default_factory=list)
    # model_source.construction_source: how ModelNew builds itself as Model does (None: unknown).
    construction: Optional[dict[str, Any]] = None
    # graph_capture.batch_probe: {"size": B, "rows_independent": bool, "why": str} where every tensor
    # input and output has B rows in dim 0 (None: no common batch dimension).
    batch: Optional[dict[str, Any]] = None
    # The tensor attributes the forward rebinds (`self.hidden = torch.tanh(...)`), each {"name": its
    # dotted name, "tensor": the id it holds when the forward returns}: state the next call reads.
    state: list[dict[str, str]] = field(default_factory=list)
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> "Graph":
        if data.get("schema") != SCHEMA:
            raise ValueError(f"unknown graph schema {data.get('schema')!r}")

        def src(d: Optional[dict[str, Any]]) -> Optional[SourceRef]:
            return SourceRef(**d) if d else None

        return Graph(
            task=data["task"], device=data["device"], torch=data["torch"],
            tensors=[TensorValue(**t) for t in data["tensors"]],
            nodes=[Node(**{**n, "source": src(n.get("source"))}) for n in data["nodes"]],
            inputs=list(data["inputs"]), outputs=list(data["outputs"]),
            uncovered=[Uncovered(u["op"], u["reason"], src(u.get("source"))) for u in data["uncovered"]],
            construction=data.get("construction"), input_values=dict(data.get("input_values") or {}),
            batch=data.get("batch"), state=list(data.get("state") or []),
        )
