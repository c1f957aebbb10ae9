"""Runs every graph fixture on PyTorch twice, as captured and as the built-in brain's normalization
rewrites it (normalize_graph), and fails naming each fixture whose outputs or module buffers differ.
A fixture the normalization leaves unchanged is named and not run; with --max-work, so is one whose
graph costs more (full-size matrix products on the CPU: the long run, `ctest -L long`, takes them).

The graph is interpreted node by node: a view is the recorded strides and offset over its root's
storage, any other node the ATen operator it names (torch.ops.aten.NAME.OVERLOAD) on the values of
its arguments, its result stored at the recorded strides; an in-place node writes into its
argument. Parameters and buffers come from the fixture's task Model (seeded), the inputs from its
get_inputs(). The fused attention kernels a GPU records, which this PyTorch lacks, run as their
definition, softmax(q kᵀ · scale + mask) v. Fixtures with a cuDNN RNN, which only a GPU runs, are
skipped, saying so. Outputs and buffers compare at the verifier's float32 tolerance."""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
GRAPHS = os.path.join(ROOT, "tests", "fixtures", "graphs")
sys.path.insert(0, os.path.join(ROOT, "harness"))

from stitchcuda_harness.task_loader import load_task  # noqa: E402

SPECIAL = {"_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
           "_scaled_dot_product_cudnn_attention"}
GPU_ONLY = {"aten::_cudnn_rnn"}


class CannotRun(Exception):
    pass


def attention(args: dict) -> tuple:
    q, k, v = args["query"], args["key"], args["value"]
    scale = args.get("scale")
    scores = (q @ k.transpose(-2, -1)) * (scale if scale is not None else 1.0 / math.sqrt(q.shape[-1]))
    if isinstance(args.get("attn_bias"), torch.Tensor):
        scores = scores + args["attn_bias"]
    if args.get("is_causal"):
        above = torch.ones(scores.shape[-2], scores.shape[-1], dtype=torch.bool).triu(1)
        scores = scores.masked_fill(above, float("-inf"))
    return torch.softmax(scores, -1) @ v, torch.empty(0), torch.empty(0), torch.empty(0)


def scalar(a: dict):
    if a.get("py"):
        return eval(a["py"].replace("{device}", "'cpu'"), {"torch": torch, "inf": math.inf, "nan": math.nan})
    v = a.get("value")
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    return v


def run(graph: dict, task, seed: int) -> tuple[list, dict]:
    tensors = {t["id"]: t for t in graph["tensors"]}
    torch.manual_seed(seed)
    model = task.instantiate(torch.device("cpu"), 42)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    inputs = task.inputs(seed, torch.device("cpu"))
    values: dict[str, torch.Tensor] = {}

    def root(tid: str) -> str:
        while tensors[tid].get("view_of"):
            tid = tensors[tid]["view_of"]
        return tid

    def value(tid: str) -> torch.Tensor:
        if tid in values:
            return values[tid]
        t = tensors[tid]
        if t["role"] == "input":
            values[tid] = inputs[int(t["name"][len("inputs["):-1])]
        elif t["role"] in ("parameter", "buffer") and t.get("name") in state:
            values[tid] = state[t["name"]].detach()
        elif t["role"] == "constant" and t.get("py"):
            values[tid] = scalar(t)
        elif t.get("view_of"):
            values[tid] = torch.as_strided(value(root(tid)), t["shape"], t["strides"], t["storage_offset"])
        else:
            raise CannotRun(f"tensor {tid} ({t['role']}) has no value")
        return values[tid]

    with torch.no_grad():
        for node in graph["nodes"]:
            outs = node["outputs"]
            if node["kind"] == "view" and len(outs) == 1 and tensors[outs[0]].get("view_of"):
                value(outs[0])
                continue
            name = node["op"].split("::")[-1]
            base, _, overload = name.partition(".")
            positional, keywords, named = [], {}, {}
            for a in node["inputs"]:
                if "tensor" in a:
                    v = value(a["tensor"])
                elif "tensors" in a:
                    v = [value(t) if t else None for t in a["tensors"]]
                else:
                    v = scalar(a)
                named[a["name"]] = v
                if a.get("keyword"):
                    keywords[a["name"]] = v
                else:
                    positional.append(v)
            if base in SPECIAL:
                result = attention(named)
            else:
                try:
                    op = getattr(getattr(torch.ops.aten, base), overload or "default")
                except (AttributeError, RuntimeError) as e:
                    raise CannotRun(f"{node['op']}: {e}")
                result = op(*positional, **keywords)
            results = list(result) if isinstance(result, (tuple, list)) else [result]
            positions = node.get("result_index") or list(range(len(outs)))
            for o, p in zip(outs, positions):
                r, t = results[p], tensors[o]
                # A view's result shares its base's storage, as recorded (a split's pieces have no base
                # in the capture); an in-place node's result is its argument.
                if node["kind"] != "compute" or not isinstance(r, torch.Tensor) or tuple(r.shape) != tuple(t["shape"]):
                    values[o] = r
                    continue
                stored = torch.empty_strided(t["shape"], t["strides"], dtype=r.dtype)
                values[o] = stored.copy_(r)
    return [value(o) for o in graph["outputs"]], {k: v.clone() for k, v in model.named_buffers()}


def differs(a, b) -> str:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape:
            return f"shape {tuple(a.shape)} against {tuple(b.shape)}"
        # The verifier's float32 tolerance: a split addmm rounds its scaled product and sum apart.
        if not torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-4, equal_nan=True):
            return f"up to {(a.double() - b.double()).abs().nan_to_num(math.inf).max().item():.3g}"
        return ""
    return "" if a == b else f"{a!r} against {b!r}"


def work(graph: dict) -> float:
    """What running the graph costs, in element operations: every tensor it names once, and for a
    matrix product the multiply-adds, sqrt(|A| |B| |C|) (= M N K for A[M,K] B[K,N])."""
    sizes = {t["id"]: math.prod(t["shape"]) for t in graph["tensors"] if t.get("shape") is not None}
    total = float(sum(sizes.values()))
    for node in graph["nodes"]:
        if not any(k in node["op"] for k in ("mm", "matmul", "linear")) or not node["outputs"]:
            continue
        operands = sorted((sizes.get(tid, 0) for a in node["inputs"]
                           for tid in ([a["tensor"]] if a.get("tensor") else a.get("tensors") or []) if tid), reverse=True)
        if len(operands) >= 2:
            total += math.sqrt(operands[0] * operands[1] * sizes.get(node["outputs"][0], 0))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--normalizer", required=True)
    parser.add_argument("--max-work", type=float, default=None,
                        help="run only fixtures whose graphs cost at most this many element operations (work()); "
                             "the others are named as left to the long run")
    parser.add_argument("fixtures", nargs="*", help="fixture names (default: every one)")
    args = parser.parse_args()
    names = args.fixtures or sorted(f[:-5] for f in os.listdir(GRAPHS) if f.endswith(".json"))
    failed, checked, left, unchanged = [], 0, [], []
    for name in names:
        path = os.path.join(GRAPHS, name + ".json")
        with open(path) as f:
            captured = json.load(f)
        done = subprocess.run([args.normalizer, path], capture_output=True, text=True)
        if done.returncode != 0:
            failed.append(f"{name}: normalize_graph failed: {done.stderr.strip()}")
            continue
        normalized = json.loads(done.stdout)
        # A graph the normalization leaves as it is computes what it computed: nothing to compare.
        if normalized == captured:
            unchanged.append(name)
            continue
        if args.max_work is not None and (n := work(captured)) > args.max_work:
            left.append(f"{name} ({n / 1e9:.1f}G)")
            continue
        gpu_only = sorted({n["op"] for n in captured["nodes"] if n["op"] in GPU_ONLY})
        if gpu_only:
            print(f"skip {name}: {', '.join(gpu_only)} runs on a GPU only")
            continue
        task = load_task(os.path.join(ROOT, captured["task"]))
        try:
            want, want_buffers = run(captured, task, 1)
            got, got_buffers = run(normalized, task, 1)
        except CannotRun as e:
            print(f"skip {name}: {e}")
            continue
        except Exception as e:  # an operator raising is a finding, named with its fixture
            failed.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0]}")
            print("FAIL " + name)
            continue
        checked += 1
        problems = [f"output {i} {d}" for i, (w, g) in enumerate(zip(want, got)) if (d := differs(w, g))]
        problems += [f"buffer {k} {d}" for k in want_buffers if (d := differs(want_buffers[k], got_buffers[k]))]
        if len(want) != len(got):
            problems.append(f"{len(got)} outputs against {len(want)}")
        if problems:
            failed.append(f"{name}: " + "; ".join(problems))
        print(("FAIL " if problems else "ok   ") + name)
    for line in failed:
        print("FAIL", line)
    if unchanged:
        print(f"{len(unchanged)} fixture(s) unchanged by the normalization, nothing to compare: " + ", ".join(unchanged))
    if left:
        print(f"left to the long run (ctest -L long), over {args.max_work / 1e9:.1f}G element operations: "
              + ", ".join(left))
    print(f"{checked} fixture(s) run in both forms, {len(failed)} differ")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
