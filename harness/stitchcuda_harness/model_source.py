"""How a generated ModelNew constructs itself exactly as the reference Model does (design §6): the
task file's own definitions (imports, constants, helper classes and functions) and the Model
class's body without its forward. Built with the same seed, the two then draw the same weights —
KernelBench's contract, with nothing copied from the reference's state."""
from __future__ import annotations

import ast
import re
import textwrap
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # annotations only: the module reads source text and needs no PyTorch to load
    import torch


def _span(node: ast.stmt) -> tuple[int, int]:
    """One-based first and last line of a statement, decorators included."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, node.end_lineno or node.lineno


def _is_definition(node: ast.stmt) -> bool:
    """Imports, definitions and assignments to plain names: what construction may read. Statements
    with effects of their own (setting torch flags, seeding, a `__main__` block) stay in the task."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, ast.Assign):
        return all(isinstance(t, (ast.Name, ast.Tuple)) for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name)
    return False


def construction_source(source: str, model_class: str, skip: set[str]) -> Optional[dict[str, Any]]:
    """{"prelude": the module-level code ModelNew's construction may need, "body": Model's class
    body less `forward`, dedented}; None when Model is not a plain class of this file. `skip`
    names the task's input factories, which ModelNew does not need."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    lines = source.splitlines()
    model: Optional[ast.ClassDef] = None
    prelude: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == model_class:
            model = node
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in skip:
            continue
        if not _is_definition(node):
            continue
        a, b = _span(node)
        prelude.append("\n".join(lines[a - 1:b]))
    if model is None:
        return None
    body: list[str] = []
    for node in model.body:
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # the docstring describes the reference's forward
        a, b = _span(node)
        body.append(textwrap.dedent("\n".join(lines[a - 1:b])))
    # `super(Model, self)` would name the reference class, which ModelNew is not.
    text = re.sub(rf"super\(\s*{re.escape(model_class)}\s*,\s*self\s*\)", "super()", "\n\n".join(body))
    return {"prelude": "\n".join(prelude), "body": text, "modelClass": model_class}


def python_literal(value: Any) -> str:
    """A non-tensor ATen argument as Python source; a device is written `{device}`, which the coder
    replaces with the device of the forward's inputs."""
    import torch

    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else f"float({str(value)!r})"
    if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
        return str(value)
    if isinstance(value, torch.device):
        return "{device}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(python_literal(v) for v in value)
        return f"[{inner}]"
    return repr(argument_text(value))


def argument_text(value: Any) -> str:
    """Any other argument as text; a storage by its kind, device and size, since its own str()
    prints every element (an RNN's flat weight buffer: seconds per thousand elements)."""
    import torch

    if torch.is_storage(value):
        nbytes = value.nbytes() if hasattr(value, "nbytes") else value.size() * value.element_size()
        return f"{type(value).__name__}(device={value.device}) of {nbytes} bytes"
    return str(value)


# Constants larger than this stay unnamed: a forward that makes them is left without a candidate.
_CONSTANT_ELEMENTS = 64


def constant_literal(t: "torch.Tensor") -> Optional[str]:
    """A small tensor made outside ATen (`torch.tensor(self.c)` in a forward) as Python source that
    makes it again, on the CPU as captured or on `{device}`; None when it is too large or not plain."""
    import torch

    if t.numel() > _CONSTANT_ELEMENTS or t.is_complex() or t.layout != torch.strided:
        return None
    values = python_literal(t.detach().cpu().tolist())
    device = "" if t.device.type == "cpu" else ", device={device}"
    return f"torch.tensor({values}, dtype={t.dtype}{device})"
