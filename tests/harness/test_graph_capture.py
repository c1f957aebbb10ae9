"""Graph capture: ATen ops with shapes, dtypes, strides, source lines and module paths; the
JSON round-trips; what cannot be captured is listed."""
from __future__ import annotations

import json
import os
import tempfile
import textwrap
import unittest

import torch

from tests.harness import REPO
from stitchcuda_harness.graph_capture import capture_graph
from stitchcuda_harness.graph_ir import SCHEMA, Graph
from stitchcuda_harness.task_loader import load_task

CPU = torch.device("cpu")


class GraphCaptureTest(unittest.TestCase):
    def test_mlp_graph(self) -> None:
        path = os.path.join(REPO, "examples", "mlp.py")
        g = capture_graph(load_task(path), CPU)
        ops = [n.op for n in g.nodes]
        self.assertIn("aten::addmm", ops)
        self.assertTrue(any(op.startswith("aten::relu") for op in ops))
        addmm = next(n for n in g.nodes if n.op == "aten::addmm")
        self.assertEqual(addmm.module, "fc")
        self.assertEqual((addmm.source.file, addmm.source.line), (path, 13))
        tensors = {t.id: t for t in g.tensors}
        out = tensors[g.outputs[0]]
        self.assertEqual((out.shape, out.dtype, out.strides), ([256, 256], "float32", [256, 1]))
        roles = {t.name: t.role for t in g.tensors if t.name}
        self.assertEqual(roles["fc.weight"], "parameter")
        self.assertEqual(roles["inputs[0]"], "input")
        self.assertEqual(g.uncovered, [])

    def test_json_round_trip(self) -> None:
        g = capture_graph(load_task(os.path.join(REPO, "examples", "elementwise_chain.py")), CPU)
        data = json.loads(json.dumps(g.to_json()))
        self.assertEqual(data["schema"], SCHEMA)
        self.assertEqual(Graph.from_json(data), g)
        self.assertEqual([n.op for n in g.nodes], ["aten::mul.Tensor", "aten::add.Tensor", "aten::relu",
                                                  "aten::sigmoid", "aten::mul.Tensor"])

    def test_inplace_and_view_kinds(self) -> None:
        g = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    y = x.view(-1)
                    y = y * 2
                    y.add_(1)
                    return y
            def get_inputs():
                return [torch.ones(2, 3)]
            """)), CPU)
        self.assertEqual([(n.op, n.kind) for n in g.nodes],
                         [("aten::view", "view"), ("aten::mul.Tensor", "compute"), ("aten::add_.Tensor", "inplace")])

    def test_data_dependent_ops_are_uncovered_not_dropped(self) -> None:
        g = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    if x.sum().item() > 0:
                        return x + 1
                    return x - 1
            def get_inputs():
                return [torch.ones(4)]
            """)), CPU)
        self.assertEqual([u.op for u in g.uncovered], ["aten::_local_scalar_dense"])
        self.assertEqual(g.uncovered[0].source.line, 5)

    def test_a_rebound_tensor_attribute_is_named_and_its_new_value_recorded(self) -> None:
        # A recurrent cell's hidden state, a plain attribute rebound in forward: the next call reads
        # it. A 0-dim attribute only read stays a constant Python can write out.
        g = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.hidden = torch.zeros(2, 3)
                    self.scale = torch.tensor(0.5)
                def forward(self, x):
                    self.hidden = torch.tanh(x + self.hidden) * self.scale
                    return self.hidden.sum(1)
            def get_inputs():
                return [torch.ones(2, 3)]
            """)), CPU)
        tensors = {t.id: t for t in g.tensors}
        hidden = next(t for t in g.tensors if t.name == "hidden")
        self.assertEqual(hidden.role, "attribute")
        scale = next(t for t in g.tensors if t.name == "scale")
        self.assertEqual((scale.role, scale.py), ("constant", "torch.tensor(0.5, dtype=torch.float32)"))
        self.assertEqual(len(g.state), 1)
        self.assertEqual(g.state[0]["name"], "hidden")
        rebound = tensors[g.state[0]["tensor"]]
        self.assertEqual((rebound.role, g.nodes[rebound.producer].op), ("intermediate", "aten::mul.Tensor"))
        self.assertEqual(g.uncovered, [])

    def test_storage_argument_is_described_not_printed(self) -> None:
        # An RNN's flat weight buffer reaches set_ as a storage of millions of elements; printing it
        # took minutes per capture.
        g = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = torch.nn.Parameter(torch.zeros(4_000_000))
                def forward(self, x):
                    buf = torch.empty(0).set_(self.w.storage())
                    return buf[:4] + x
            def get_inputs():
                return [torch.ones(4)]
            """)), CPU)
        set_ = next(n for n in g.nodes if n.op == "aten::set_.source_Storage")
        source = next(a for a in set_.inputs if a["name"] == "source")
        self.assertRegex(source["value"], r"^\w*Storage\(device=cpu\) of 16000000 bytes$")
        self.assertEqual(source["py"], repr(source["value"]))

    def test_batch_probe_tells_independent_rows_from_shared_statistics(self) -> None:
        independent = capture_graph(load_task(os.path.join(REPO, "examples", "mlp.py")), CPU)
        self.assertEqual((independent.batch["size"], independent.batch["rows_independent"]), (256, True))
        # The probe's forward, recorded: the same operators on half the rows, for the planner to tell
        # which numbers scale with the batch.
        half = independent.batch["graph"]
        self.assertEqual([n["op"] for n in half["nodes"]], [n.op for n in independent.nodes])
        self.assertEqual([t["shape"] for t in half["tensors"] if t["role"] == "input"], [[128, 512]])
        self.assertEqual([t["shape"] for t in half["tensors"] if t["role"] == "parameter"],
                         [t.shape for t in independent.tensors if t.role == "parameter"])
        self.assertIsNone(half["batch"])
        shared = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bn = torch.nn.BatchNorm1d(8)  # training mode: statistics over the batch
                def forward(self, x):
                    return self.bn(x)
            def get_inputs():
                return [torch.randn(16, 8)]
            """)), CPU)
        self.assertEqual((shared.batch["size"], shared.batch["rows_independent"]), (16, False))
        self.assertNotIn("graph", shared.batch)
        self.assertIn("change with the other rows", shared.batch["why"])
        fixed = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    return x.view(16, 2, 4).sum(1)  # the batch size written in
            def get_inputs():
                return [torch.randn(16, 8)]
            """)), CPU)
        self.assertFalse(fixed.batch["rows_independent"])
        self.assertIn("raised RuntimeError", fixed.batch["why"])
        loss = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x, y):
                    return ((x - y) ** 2).mean()
            def get_inputs():
                return [torch.randn(16, 8), torch.randn(16, 8)]
            """)), CPU)
        self.assertIsNone(loss.batch)  # a 0-dim output: no batch dimension in common
        empty = capture_graph(load_task(self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    return x * 2, x[:, :0]  # rows of no elements beside rows of some
            def get_inputs():
                return [torch.randn(16, 8)]
            """)), CPU)
        self.assertTrue(empty.batch["rows_independent"])

    def write(self, body: str) -> str:
        fd, path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(textwrap.dedent(body))
        self.addCleanup(os.unlink, path)
        return path


if __name__ == "__main__":
    unittest.main()
