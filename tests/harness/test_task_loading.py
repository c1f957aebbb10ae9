"""Task loading: both formats, and every error carries the user's file and line."""
from __future__ import annotations

import os
import tempfile
import textwrap
import unittest

import torch

from tests.harness import REPO
from stitchcuda_harness.errors import HarnessError
from stitchcuda_harness.task_loader import load_task, summarize

CPU = torch.device("cpu")


class TaskLoadingTest(unittest.TestCase):
    def write(self, body: str) -> str:
        fd, path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(textwrap.dedent(body))
        self.addCleanup(os.unlink, path)
        return path

    def error_of(self, path: str, **params: str) -> HarnessError:
        with self.assertRaises(HarnessError) as ctx:
            summarize(load_task(path, params), CPU)
        return ctx.exception

    def test_kernelbench_task_summary(self) -> None:
        s = summarize(load_task(os.path.join(REPO, "tests/harness/fixtures/small_elementwise.py")), CPU)
        self.assertEqual(s["format"], "kernelbench")
        self.assertEqual(s["outputs"][0]["shape"], [64, 128])
        self.assertEqual(len(s["inputs"]), 2)

    def test_summary_reports_eagers_precision_flags_as_the_task_sets_them(self) -> None:
        before = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        self.addCleanup(self._restore_tf32, before)
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = True, False
        path = self.write("""
            import torch
            import torch.nn as nn
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = True
            class Model(nn.Module):
                def forward(self, x):
                    return x + 1
            def get_inputs():
                return [torch.ones(4)]
        """)
        p = summarize(load_task(path), CPU)["precision"]
        self.assertIs(p["cudnn.allow_tf32"], False)   # read after the task module ran
        self.assertIs(p["cuda.matmul.allow_tf32"], True)

    @staticmethod
    def _restore_tf32(flags: tuple[bool, bool]) -> None:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = flags

    def test_directive_names_model_and_inputs(self) -> None:
        s = summarize(load_task(os.path.join(REPO, "examples/mlp.py")), CPU)
        self.assertEqual((s["format"], s["modelClass"], s["inputsFn"]), ("directive", "MLPBlock", "make_inputs"))
        self.assertEqual(s["parameters"]["count"], 2)

    def test_params_name_model_and_inputs(self) -> None:
        path = self.write("""
            import torch
            class Net(torch.nn.Module):
                def forward(self, x):
                    return x * 2
            def make():
                return [torch.ones(3)]
            """)
        s = summarize(load_task(path, {"modelClass": "Net", "inputsFn": "make"}), CPU)
        self.assertEqual(s["format"], "params")

    def test_syntax_error_has_file_and_line(self) -> None:
        path = self.write("import torch\n\ndef broken(:\n    pass\n")
        err = self.error_of(path)
        self.assertEqual((err.code, err.file, err.line), ("syntax_error", path, 3))

    def test_missing_model_names_the_name(self) -> None:
        path = self.write("import torch\ndef get_inputs():\n    return []\n")
        err = self.error_of(path)
        self.assertEqual(err.code, "task_missing_name")
        self.assertIn("'Model'", err.message)
        self.assertEqual(err.file, path)

    def test_missing_inputs_fn_from_directive(self) -> None:
        path = self.write("""
            # stitchcuda: model=Net inputs=nowhere
            import torch
            class Net(torch.nn.Module):
                def forward(self, x):
                    return x
            """)
        err = self.error_of(path)
        self.assertEqual((err.code, err.line), ("task_missing_name", 2))

    def test_exception_in_init_points_at_the_raising_line(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    raise ValueError("bad config")
                def forward(self, x):
                    return x
            def get_inputs():
                return [torch.ones(2)]
            """)
        err = self.error_of(path)
        self.assertEqual((err.code, err.file, err.line), ("task_init_error", path, 6))
        self.assertIn("bad config", err.message)

    def test_exception_in_forward_points_at_the_raising_line(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    y = x + 1
                    return y @ torch.ones(7, 7)
            def get_inputs():
                return [torch.ones(2, 3)]
            """)
        err = self.error_of(path)
        self.assertEqual((err.code, err.line), ("task_forward_error", 6))

    def test_non_tensor_output(self) -> None:
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    return {"y": x}
            def get_inputs():
                return [torch.ones(2)]
            """)
        err = self.error_of(path)
        self.assertEqual((err.code, err.line), ("task_non_tensor_output", 4))

    def test_exception_at_import(self) -> None:
        path = self.write("import torch\nX = 1 / 0\n")
        err = self.error_of(path)
        self.assertEqual((err.code, err.line), ("task_import_error", 2))

    def test_missing_file(self) -> None:
        with self.assertRaises(HarnessError) as ctx:
            load_task("/nonexistent/task.py")
        self.assertEqual(ctx.exception.code, "file_not_found")

    def write_bytes(self, data: bytes) -> str:
        fd, path = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        self.addCleanup(os.unlink, path)
        return path

    def test_a_binary_or_non_utf8_file_is_not_a_python_source_file(self) -> None:
        for data in (b"\x7fELF\x02\x01\x01\x00\x00\x00", b"import torch\n# caf\xe9\nclass Model: pass\n"):
            with self.subTest(data=data[:8]):
                path = self.write_bytes(data)
                with self.assertRaises(HarnessError) as ctx:
                    load_task(path)
                self.assertEqual(ctx.exception.code, "not_python_source")
                self.assertIn(f"{path} is not a Python source file", ctx.exception.message)

    def test_a_coding_comment_is_honoured(self) -> None:
        path = self.write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\nNAME = '\xe9'\nclass Model(torch.nn.Module):\n"
                                b"    def forward(self, x):\n        return x + 1\ndef get_inputs():\n    return [torch.ones(2)]\n")
        self.assertEqual(summarize(load_task(path), CPU)["outputs"][0]["shape"], [2])

    def test_cpu_memory_running_out_is_named_as_cpu_memory(self) -> None:
        # An allocation no machine satisfies fails at once, as a large one does under a memory limit.
        path = self.write("""
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    return x + 1
            def get_inputs():
                return [torch.randn(1 << 46)]
            """)
        err = self.error_of(path)
        self.assertEqual((err.code, err.line), ("cpu_out_of_memory", 7))
        self.assertIn("out of CPU memory", err.message)


if __name__ == "__main__":
    unittest.main()
