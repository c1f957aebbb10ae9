"""Static anti-hacking guards (design §7) over a candidate's Python source, the C++/CUDA strings
it embeds (load_inline) and its fast-path `.cu`. They read the code without running it, so they
also run in CI; the runtime guards confirm what can only be seen by running."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .runtime_guards import ALLOWED_ATEN
from .verdict import Finding

ALLOWED_TORCH_CALLS = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "as_strided", "is_tensor", "Size",
    "device", "get_default_dtype", "no_grad", "inference_mode", "is_grad_enabled", "tensor",
    "cuda.current_stream", "cuda.current_device", "cuda.is_available", "cuda.get_device_capability",
    "cuda.get_device_properties", "utils.cpp_extension.load_inline", "utils.cpp_extension.load",
}
COMPUTE_METHODS = {
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "matmul", "mm", "bmm", "addmm", "baddbmm",
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "exp", "exp_", "log", "log_",
    "relu", "relu_", "sigmoid", "sigmoid_", "tanh", "tanh_", "softmax", "log_softmax", "pow", "sqrt",
    "rsqrt", "abs", "neg", "clamp", "clamp_", "clone", "copy_", "float", "half", "double", "bfloat16",
    "index_select", "gather", "scatter", "scatter_add", "where", "masked_fill", "cumsum", "norm", "var",
    "std", "topk", "sort", "logsumexp", "erf", "gelu", "conv2d", "linear", "addcmul", "lerp", "square",
}
_TIMER_NAMES = ("perf_counter", "monotonic", "time", "process_time", "elapsed_time", "synchronize", "Event", "record")
_PRECISION_FLAGS = ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")
_THREAD_MODULES = ("threading", "_thread", "concurrent.futures", "multiprocessing", "asyncio")
_INTROSPECTION = {"sys._getframe", "sys.settrace", "sys.setprofile", "inspect.stack", "inspect.currentframe",
                  "inspect.getouterframes", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                  "ctypes.pythonapi", "sys.modules", "builtins"}
_DYNAMIC = {"exec", "eval", "compile", "__import__", "importlib.import_module", "importlib.reload", "runpy.run_path",
            "importlib.util.spec_from_file_location", "importlib.machinery.SourceFileLoader"}
_LOW_PRECISION = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "autocast": "fp16"}

# C++/CUDA patterns: (regex, check, precision kind or None, message, op kind or None). A TF32
# finding names the kind of op whose precision it lowers where the code tells ("conv": cuDNN's
# math types; "matmul": cuBLAS's), so the verifier can excuse exactly the TF32 the reference itself
# runs (reference_runs_in_tf32).
_CXX_RULES: list[tuple[re.Pattern[str], str, Optional[str], str, Optional[str]]] = [
    (re.compile(r"\bcudaStreamCreate\w*\s*\(\s*&?\s*(\w+)"), "side_stream", None, "creates its own CUDA stream", None),
    (re.compile(r"\bcudaStreamPerThread\b|\bcudaLaunchHostFunc\b"), "side_stream", None, "launches outside the given stream",
     None),
    (re.compile(r"\bstd::thread\b|\bpthread_create\b|\bstd::async\b"), "extra_thread", None, "starts host threads", None),
    (re.compile(r"\b__half2?\b|\b__float2half\w*|\bhalf2\b|\bCUDNN_DATA_HALF\b|CUBLAS_COMPUTE_32F_FAST_16F|CUBLAS_COMPUTE_16F|"
                r"\bCUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION\b"),
     "precision_downgrade", "fp16", "uses fp16 arithmetic", None),
    (re.compile(r"\b__nv_bfloat16\w*|\b__float2bfloat16\w*|CUBLAS_COMPUTE_32F_FAST_16BF|\bCUDNN_DATA_BFLOAT16\b"),
     "precision_downgrade", "bf16", "uses bf16 arithmetic", None),
    (re.compile(r"\bCUBLAS_COMPUTE_32F_FAST_TF32\b|\bCUBLAS_TF32_TENSOR_OP_MATH\b"),
     "precision_downgrade", "tf32", "uses TF32 tensor-core math in a matmul", "matmul"),
    # On fp32 data cuDNN's default and tensor-op math types both let its algorithms use TF32
    # tensor cores (Ampere and later); only CUDNN_FMA_MATH keeps a convolution or an RNN in fp32.
    # Its ALLOW_CONVERSION math may convert fp32 tensors to fp16 (the rule above). "conv" stands
    # for both: the reference's convolutions and RNNs alike follow cudnn.allow_tf32.
    (re.compile(r"\bCUDNN_TENSOR_OP_MATH\b|\bCUDNN_DEFAULT_MATH\b"),
     "precision_downgrade", "tf32", "lets cuDNN use TF32 tensor cores in a convolution or an RNN", "conv"),
    (re.compile(r"\btf32\b|cvt\.rna\.tf32"), "precision_downgrade", "tf32", "uses TF32 tensor-core math", None),
    (re.compile(r"\b(?:torch|at)::(?!empty\b|empty_like\b|empty_strided\b|zeros\b|zeros_like\b|from_blob\b|Tensor\b|"
                r"TensorOptions\b|k[A-Z]\w*\b|Scalar\b|ScalarType\b|IntArrayRef\b|Device\b|cuda::|indexing\b|"
                r"TORCH_CHECK|check\w*)(\w+)\s*\("),
     "pytorch_compute", None, "calls an ATen operator from C++", None),
    (re.compile(r"\.\s*(?:matmul|mm|bmm|addmm|softmax|relu|sigmoid|tanh|conv2d|linear|sum|mean)\s*\("),
     "pytorch_compute", None, "calls a tensor compute method from C++", None),
]

# A cuDNN convolution descriptor starts in CUDNN_DEFAULT_MATH, which lets fp32 convolutions run on
# TF32 tensor cores: a source that makes one and never names CUDNN_FMA_MATH computes in TF32.
_CONV_DESCRIPTOR = re.compile(r"\bcudnnCreateConvolutionDescriptor\s*\(")
_FMA_MATH = re.compile(r"\bCUDNN_FMA_MATH\b")


@dataclass
class StaticContext:
    """What the guards need to know about the job: the reference's module stem (importing it is a
    fallback to the reference) and which lower precisions the job opted in to."""

    reference_stem: str = ""
    allowed_precision: set[str] = field(default_factory=set)


def scan_cxx(text: str, file: str, first_line: int, ctx: StaticContext, torch_allowed: bool) -> list[Finding]:
    out: list[Finding] = []
    code = _strip_cxx_comments(text)
    for pattern, check, precision, message, op in _CXX_RULES:
        if check == "pytorch_compute" and not torch_allowed:
            continue  # a fast-path .cu cannot call ATen: it is built without PyTorch headers
        for m in pattern.finditer(code):
            if precision and precision in ctx.allowed_precision:
                continue
            if check == "side_stream" and m.groups() and _capture_only_stream(code, m.group(1)):
                continue
            line = first_line + text.count("\n", 0, m.start())
            data: dict[str, object] = {"precision": precision} if precision else {}
            if op:
                data["op"] = op
            out.append(Finding(check, f"{message}: '{m.group(0).strip()}'", "static", file, line, data))
    m = _CONV_DESCRIPTOR.search(code)
    if m and not _FMA_MATH.search(code) and "tf32" not in ctx.allowed_precision:
        out.append(Finding("precision_downgrade", "makes a cuDNN convolution descriptor and never sets CUDNN_FMA_MATH: "
                           "its default math lets fp32 convolutions use TF32 tensor cores", "static", file,
                           first_line + text.count("\n", 0, m.start()), {"precision": "tf32", "op": "conv"}))
    return out


def reference_runs_in_tf32(finding: Finding, reference_precision: dict) -> bool:
    """Whether a TF32 `precision_downgrade` finding only matches what the reference itself computes
    in TF32 (design §7: eager's precision is no downgrade), from the verdict's reference_precision
    ({"conv_ops", "matmul_ops", "tf32_ops", ...}). A TF32 convolution passes where the reference's
    convolutions run in TF32 (cudnn.allow_tf32 on a GPU), a TF32 matmul where its matmuls do
    (cuda.matmul.allow_tf32); TF32 whose kind of op the source does not tell (a hand-written
    tensor-core kernel) only where every convolution and matmul of the reference runs in TF32."""
    if finding.check != "precision_downgrade" or finding.data.get("precision") != "tf32":
        return False
    tf32_ops = set(reference_precision.get("tf32_ops") or [])
    if not tf32_ops:
        return False
    conv = set(reference_precision.get("conv_ops") or [])
    matmul = set(reference_precision.get("matmul_ops") or [])
    op = finding.data.get("op")
    if op == "conv":
        return bool(conv & tf32_ops)
    if op == "matmul":
        return bool(matmul & tf32_ops)
    return (conv | matmul) <= tf32_ops


def _capture_only_stream(code: str, name: str) -> bool:
    """A stream that only records a CUDA-graph capture runs nothing: it is begun with
    cudaStreamBeginCapture and nothing is launched on it (no <<<...>>> and no *Launch* call
    names it). What is captured is still checked at run time: the profiler sees every kernel,
    so work that runs on any stream but the caller's is a side_stream finding there."""
    captured = re.search(rf"\bcudaStreamBeginCapture\s*\(\s*{re.escape(name)}\b", code)
    launched = re.search(rf"<<<[^>]*\b{re.escape(name)}\b[^>]*>>>|\w*Launch\w*\s*\([^;]*\b{re.escape(name)}\b", code)
    return captured is not None and launched is None


def _strip_cxx_comments(text: str) -> str:
    """Blank out comments but keep every newline, so offsets still give the right line."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


class _PythonScan(ast.NodeVisitor):
    def __init__(self, file: str, ctx: StaticContext) -> None:
        self.file = file
        self.ctx = ctx
        self.aliases: dict[str, str] = {}
        self.findings: list[Finding] = []
        self.layer_attrs: set[str] = set()  # self.<name> bound to an nn layer in __init__
        self.declared_ops: set[str] = set()  # STITCH_PYTORCH_OPS: the operators left in PyTorch

    def add(self, check: str, node: ast.AST, message: str, **data: object) -> None:
        self.findings.append(Finding(check, message, "static", self.file, getattr(node, "lineno", None), dict(data)))

    def resolve(self, node: ast.AST) -> Optional[str]:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            return None
        return ".".join([root] + list(reversed(parts)))

    # imports -----------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            self.check_import(a.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        self.check_import(base, node)
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
            self.check_import(f"{base}.{a.name}", node)

    def check_import(self, name: str, node: ast.AST) -> None:
        if any(name == m or name.startswith(m + ".") for m in _THREAD_MODULES):
            self.add("extra_thread", node, f"imports {name}: work on another host thread escapes the timed region")
        if name.startswith("stitchcuda_harness") and name not in ("stitchcuda_harness.abi", "stitchcuda_harness.abi.load_library"):
            self.add("patched_harness", node, f"imports the harness ({name}); only stitchcuda_harness.abi is part of the candidate ABI")
        stem = self.ctx.reference_stem
        if stem and (name == stem or name.startswith(stem + ".")):
            self.add("reference_access", node, f"imports the reference module '{stem}'")

    # structure ---------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = [self.resolve(b) or (b.id if isinstance(b, ast.Name) else ast.unparse(b)) for b in node.bases]
        if any(b in ("torch.Tensor", "torch._C._TensorBase", "torch._C.TensorBase") for b in bases) or any(
                isinstance(s, ast.FunctionDef) and s.name in ("__torch_function__", "__torch_dispatch__") for s in node.body):
            self.add("tensor_subclass_output", node, f"class {node.name} is a tensor subclass or overrides torch dispatch")
        if node.name == "ModelNew":
            for b in bases:
                if b not in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                    self.add("subclasses_reference", node, f"ModelNew derives from {b}, not nn.Module: it can inherit the reference's forward")
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    self._collect_layers(item)
        self.generic_visit(node)

    def _collect_layers(self, init: ast.FunctionDef) -> None:
        for n in ast.walk(init):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                kind = self.resolve(n.value.func) or ""
                if kind.startswith("torch.nn.") and kind.rsplit(".", 1)[-1] not in ("Parameter", "ParameterList", "ParameterDict", "Buffer"):
                    for t in n.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            self.layer_attrs.add(t.attr)

    def visit_Try(self, node: ast.Try) -> None:
        if not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body):
            self.add("try_except_fallback", node, "try/except in the candidate: an exception path can fall back to other code")
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            target = self.resolve(item.context_expr.func) if isinstance(item.context_expr, ast.Call) else None
            if target == "contextlib.suppress":
                self.add("try_except_fallback", node, "contextlib.suppress swallows exceptions")
        self.generic_visit(node)

    # mutation of modules the judge relies on ----------------------------------------------
    def classify_patch(self, target: str) -> str:
        last = target.rsplit(".", 1)[-1]
        if last in _PRECISION_FLAGS:
            return "precision_downgrade"
        if target.startswith(("time.", "timeit.")) or (target.startswith("torch.cuda") and last in _TIMER_NAMES):
            return "patched_timer"
        if target.startswith(("stitchcuda_harness", "sys.", "builtins", "gc.")):
            return "patched_harness"
        return "patched_torch_function"

    def check_target(self, target: ast.AST, node: ast.AST, value: Optional[ast.AST]) -> None:
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Attribute):
            name = self.resolve(target)
            if name and name.split(".")[0] in ("torch", "time", "timeit", "stitchcuda_harness", "sys", "builtins", "gc", "threading"):
                check = self.classify_patch(name)
                is_false = isinstance(value, ast.Constant) and value.value is False
                if check == "precision_downgrade" and is_false:
                    return  # turning reduced precision off is never a downgrade
                if check == "precision_downgrade" and "tf32" in self.ctx.allowed_precision:
                    return
                self.add(check, node, f"assigns to {name}")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.check_target(t, node, None)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self.check_target(t, node, node.value)
        alias = self.resolve(node.value) if isinstance(node.value, ast.Attribute) else None
        if alias and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.aliases[node.targets[0].id] = alias  # `Ev = torch.cuda.Event` then `Ev.x = ...`
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.check_target(node.target, node, None)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self.check_target(t, node, None)
        self.generic_visit(node)

    # calls and references ------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.resolve(node)
        if name:
            if name in _INTROSPECTION or any(name.startswith(p + ".") for p in _INTROSPECTION) or any(
                    marker in name for marker in ("_python_dispatch", "dispatch_mode", "torch.profiler", "autograd.profiler")):
                self.add("judge_introspection", node, f"reaches into the interpreter or the judge's instruments ({name})")
            last = name.rsplit(".", 1)[-1]
            if name.startswith("torch.") and last in _LOW_PRECISION and _LOW_PRECISION[last] not in self.ctx.allowed_precision:
                self.add("precision_downgrade", node, f"uses {name}", precision=_LOW_PRECISION[last])
            if name in ("torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.ExternalStream"):
                self.add("side_stream", node, f"uses {name}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = self.resolve(func) or (func.id if isinstance(func, ast.Name) else None)
        if name in _DYNAMIC:
            self.add("dynamic_code", node, f"{name}() runs code the guards cannot read")
        if name in ("setattr", "delattr") and node.args:
            owner = self.resolve(node.args[0])
            if owner and owner.split(".")[0] in ("torch", "time", "stitchcuda_harness", "sys", "builtins"):
                attr = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else "?"
                self.add(self.classify_patch(f"{owner}.{attr}"), node, f"{name}({owner}, {attr!r}, ...)")
        if name == "getattr" and len(node.args) > 1 and not isinstance(node.args[1], ast.Constant):
            self.add("dynamic_code", node, "getattr with a computed name hides what is called")
        if name == "torch.set_float32_matmul_precision" and "tf32" not in self.ctx.allowed_precision:
            arg = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            if arg != "highest":
                self.add("precision_downgrade", node, f"torch.set_float32_matmul_precision({arg!r})", precision="tf32")
        if isinstance(func, ast.Attribute) and func.attr in ("half", "bfloat16") and self.resolve(func) is None:
            kind = "fp16" if func.attr == "half" else "bf16"
            if kind not in self.ctx.allowed_precision:
                self.add("precision_downgrade", node, f".{func.attr}() converts to a lower precision", precision=kind)
        self.generic_visit(node)

    def check_compute_call(self, node: ast.Call, func: ast.AST, name: Optional[str]) -> None:
        if name and name.startswith("torch.ops.aten."):
            # A partial candidate issues the operators it leaves in PyTorch through torch.ops, and
            # declares them; views and allocations move no data. Anything else is compute.
            schema = "aten::" + name[len("torch.ops.aten."):].split(".")[0]
            if schema in self.declared_ops or schema in ALLOWED_ATEN:
                return
        if name and name.startswith("torch."):
            short = name[len("torch."):]
            if short.startswith(("nn.functional.", "special.", "linalg.", "fft.")) or (
                    "." not in short and short not in ALLOWED_TORCH_CALLS) or short.startswith("ops.aten."):
                self.add("pytorch_compute", node, f"forward calls {name}: PyTorch compute on the claimed path")
        elif isinstance(func, ast.Attribute) and name is None:
            receiver = func.value
            if isinstance(receiver, ast.Name) and receiver.id == "self" and func.attr in self.layer_attrs:
                self.add("pytorch_compute", node, f"forward calls the PyTorch layer self.{func.attr}")
            elif func.attr in COMPUTE_METHODS:
                self.add("pytorch_compute", node, f"forward calls tensor method .{func.attr}(): PyTorch compute on the claimed path")
        elif isinstance(func, ast.Name) and func.id in self.layer_attrs:
            self.add("pytorch_compute", node, f"forward calls the PyTorch layer {func.id}")

    def visit_Constant(self, node: ast.Constant) -> None:
        stem = self.ctx.reference_stem
        if isinstance(node.value, str):
            if stem and re.search(rf"(^|/){re.escape(stem)}\.py$", node.value):
                self.add("reference_access", node, f"names the reference file {node.value!r}")
            if re.search(r"__global__|#include|torch::|at::", node.value):
                self.findings.extend(scan_cxx(node.value, self.file, node.lineno, self.ctx, torch_allowed=True))


def declared_pytorch_ops(tree: ast.Module) -> dict[str, int]:
    """The module-level STITCH_PYTORCH_OPS literal: the ATen operators (schema name → calls per
    forward) a partial candidate declares it leaves in PyTorch; {} when absent or not a literal."""
    for n in tree.body:
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "STITCH_PYTORCH_OPS" for t in n.targets):
            try:
                value = ast.literal_eval(n.value)
            except ValueError:
                return {}
            if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, int) for k, v in value.items()):
                return value
    return {}


def _hot_path_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """ModelNew.forward and everything in the file it calls by name (self.method, helper())."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    methods: dict[str, ast.FunctionDef] = {}
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name == "ModelNew":
            methods = {m.name: m for m in n.body if isinstance(m, ast.FunctionDef)}
    todo = [methods["forward"]] if "forward" in methods else []
    seen: list[ast.FunctionDef] = []
    while todo:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.append(fn)
        for c in ast.walk(fn):
            if isinstance(c, ast.Call):
                f = c.func
                if isinstance(f, ast.Name) and f.id in functions:
                    todo.append(functions[f.id])
                elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" and f.attr in methods:
                    todo.append(methods[f.attr])
    return seen


def scan_python(source: str, file: str, ctx: StaticContext) -> list[Finding]:
    try:
        tree = ast.parse(source, file)
    except SyntaxError as exc:
        return [Finding("candidate_load_error", f"syntax error: {exc.msg}", "static", file, exc.lineno)]
    scan = _PythonScan(file, ctx)
    scan.declared_ops = set(declared_pytorch_ops(tree))
    scan.visit(tree)  # whole file: imports, patches, structure
    hot = _hot_path_functions(tree)
    for fn in hot:
        for stmt in fn.body:
            _visit_compute_only(scan, stmt)
    return _dedupe(scan.findings)


def _visit_compute_only(scan: _PythonScan, stmt: ast.AST) -> None:
    """Second pass over the hot path looking only for compute (the first pass saw the rest)."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            func = node.func
            name = scan.resolve(func) or (func.id if isinstance(func, ast.Name) else None)
            scan.check_compute_call(node, func, name)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            scan.add("pytorch_compute", node, "forward uses the @ operator")


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple[str, Optional[int], str]] = set()
    out = []
    for f in findings:
        key = (f.check, f.line, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def scan_candidate(python_file: str, cuda_file: Optional[str], ctx: StaticContext) -> list[Finding]:
    with open(python_file, encoding="utf-8", errors="replace") as f:
        findings = scan_python(f.read(), python_file, ctx)
    if cuda_file:
        with open(cuda_file, encoding="utf-8", errors="replace") as f:
            findings += scan_cxx(f.read(), cuda_file, 1, ctx, torch_allowed=False)
    return findings
