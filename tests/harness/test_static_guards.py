"""Static guards over the adversarial suite (each file's manifest entry names what the static
pass alone must find) and over honest candidates (which must produce no finding)."""
from __future__ import annotations

import json
import os
import unittest

from tests.harness import REPO
from stitchcuda_harness.candidate_files import resolve_candidate
from stitchcuda_harness.static_guards import StaticContext, reference_runs_in_tf32, scan_candidate, scan_cxx, scan_python
from stitchcuda_harness.verdict import CHECK_NAMES

HERE = os.path.join(REPO, "tests", "harness")


def load_manifest() -> dict:
    with open(os.path.join(HERE, "adversarial", "manifest.json")) as f:
        return json.load(f)


def static_checks(candidate: str, reference_stem: str = "", allowed: frozenset[str] = frozenset()) -> set[str]:
    files = resolve_candidate(candidate)
    return {f.check for f in scan_candidate(files.python, files.cuda, StaticContext(reference_stem, set(allowed)))}


class AdversarialStaticTest(unittest.TestCase):
    def test_manifest_has_at_least_15_cheats_with_known_check_names(self) -> None:
        manifest = load_manifest()
        self.assertGreaterEqual(len(manifest["candidates"]), 15)
        for entry in manifest["candidates"]:
            self.assertTrue(set(entry["expect"]) <= set(CHECK_NAMES), entry)
            self.assertTrue(set(entry["static"]) <= set(CHECK_NAMES), entry)

    def test_each_cheat_is_seen_statically(self) -> None:
        manifest = load_manifest()
        for entry in manifest["candidates"]:
            with self.subTest(entry["file"]):
                stem = os.path.splitext(os.path.basename(entry["task"]))[0]
                got = static_checks(os.path.join(HERE, "adversarial", entry["file"]), stem)
                self.assertTrue(set(entry["static"]) <= got, f"{entry['file']}: expected {entry['static']}, got {sorted(got)}")

    def test_honest_candidates_are_clean(self) -> None:
        for name in ("elementwise_chain", "mlp", "host_elementwise"):
            with self.subTest(name):
                self.assertEqual(static_checks(os.path.join(HERE, "honest", name), "elementwise_chain"), set())


class PythonRulesTest(unittest.TestCase):
    def checks(self, source: str, allowed: set[str] | None = None) -> set[str]:
        return {f.check for f in scan_python(source, "cand.py", StaticContext("task", allowed or set()))}

    def test_compute_in_init_is_allowed_but_not_in_forward(self) -> None:
        src = ("import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n"
               "    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.randn(3).abs())\n"
               "    def forward(self, x):\n        return helper(x)\n"
               "def helper(x):\n    return torch.nn.functional.gelu(x)\n")
        self.assertEqual(self.checks(src), {"pytorch_compute"})

    def test_layer_called_in_forward(self) -> None:
        src = ("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.fc = nn.Linear(2, 2)\n    def forward(self, x):\n        return self.fc(x)\n")
        self.assertEqual(self.checks(src), {"pytorch_compute"})

    def test_tf32_flag_respects_opt_in_and_turning_it_off(self) -> None:
        src = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
        self.assertEqual(self.checks(src), {"precision_downgrade"})
        self.assertEqual(self.checks(src, {"tf32"}), set())
        self.assertEqual(self.checks("import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n"), set())

    def test_aliased_timer_patch(self) -> None:
        src = "import torch\nEv = torch.cuda.Event\nEv.elapsed_time = lambda a, b: 0.0\n"
        self.assertEqual(self.checks(src), {"patched_timer"})

    def test_setattr_on_torch(self) -> None:
        self.assertEqual(self.checks("import torch\nsetattr(torch, 'matmul', None)\n"), {"patched_torch_function"})

    def test_import_fallback_try_is_allowed(self) -> None:
        self.assertEqual(self.checks("try:\n    import numpy\nexcept ImportError:\n    numpy = None\n"), set())

    def test_load_inline_cpp_is_scanned(self) -> None:
        src = ('cpp = """\n#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor a, torch::Tensor b) {\n'
               '  return torch::matmul(a, b);\n}\n"""\n')
        found = scan_python(src, "cand.py", StaticContext())
        self.assertEqual([(f.check, f.line) for f in found], [("pytorch_compute", 4)])

    def test_cxx_allocation_is_allowed(self) -> None:
        src = 'cpp = """\n#include <torch/extension.h>\nauto out = torch::empty_like(x);\n"""\n'
        self.assertEqual(self.checks(src), set())


class CaptureStreamTest(unittest.TestCase):
    """A stream made only to record a CUDA-graph capture (the built-in coder's replay) is not a
    side stream; one that anything is launched on still is."""

    CAPTURE = ("static cudaStream_t cap = nullptr;\n"
               "int f(cudaStream_t stream) {\n"
               "  if (!cap) cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking);\n"
               "  cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal);\n"
               "  run(cap);\n  cudaStreamEndCapture(cap, &graph);\n"
               "  return cudaGraphLaunch(exec, stream);\n}\n")

    def checks(self, code: str) -> set[str]:
        return {f.check for f in scan_cxx(code, "c.cu", 1, StaticContext(), False)}

    def test_capture_only_stream_is_clean(self) -> None:
        self.assertEqual(self.checks(self.CAPTURE), set())

    def test_graph_launched_on_the_capture_stream_is_a_side_stream(self) -> None:
        self.assertEqual(self.checks(self.CAPTURE.replace("cudaGraphLaunch(exec, stream)", "cudaGraphLaunch(exec, cap)")),
                         {"side_stream"})

    def test_kernel_launched_on_it_is_a_side_stream(self) -> None:
        self.assertEqual(self.checks(self.CAPTURE.replace("run(cap);", "k<<<1, 32, 0, cap>>>();")), {"side_stream"})

    def test_stream_never_captured_is_a_side_stream(self) -> None:
        self.assertEqual(self.checks(self.CAPTURE.replace("cudaStreamBeginCapture(cap,", "cudaStreamQuery(cap,")),
                         {"side_stream"})


if __name__ == "__main__":
    unittest.main()


class Tf32KindTest(unittest.TestCase):
    """TF32 in C++/CUDA is flagged with the kind of op it lowers, so the verifier excuses exactly
    what the reference itself runs in TF32 (design §7: eager's precision is no downgrade)."""

    CONV_TF32 = {"conv_ops": ["aten::convolution"], "matmul_ops": ["aten::mm"], "tf32_ops": ["aten::convolution"]}
    NO_TF32 = {"conv_ops": ["aten::convolution"], "matmul_ops": ["aten::mm"], "tf32_ops": []}
    MATMUL_ONLY_FP32 = {"conv_ops": [], "matmul_ops": ["aten::addmm"], "tf32_ops": []}

    @staticmethod
    def findings(code: str, allowed: set[str] | None = None) -> list:
        return [f for f in scan_cxx(code, "c.cu", 1, StaticContext("task", allowed or set()), torch_allowed=False)
                if f.check == "precision_downgrade"]

    def test_cudnn_math_types_that_allow_tf32_are_conv_findings(self) -> None:
        for math in ("CUDNN_DEFAULT_MATH", "CUDNN_TENSOR_OP_MATH"):
            with self.subTest(math):
                found = self.findings(f"cudnnSetConvolutionMathType(d, {math});\nCUDNN_FMA_MATH;\n")
                self.assertEqual([(f.data["precision"], f.data["op"], f.line) for f in found], [("tf32", "conv", 1)])
        self.assertEqual(self.findings("cudnnCreateConvolutionDescriptor(&d);\ncudnnSetConvolutionMathType(d, CUDNN_FMA_MATH);\n"), [])
        self.assertEqual(self.findings("cudnnSetConvolutionMathType(d, CUDNN_DEFAULT_MATH);\n", {"tf32"}), [])
        # The conversion math may turn fp32 tensors into fp16: no TF32 excuse covers it.
        converted = self.findings("cudnnSetConvolutionMathType(d, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);\n")
        self.assertEqual([f.data["precision"] for f in converted], ["fp16"])

    def test_a_convolution_descriptor_left_at_its_default_math_is_tf32(self) -> None:
        found = self.findings("// setup\ncudnnCreateConvolutionDescriptor(&d);\ncudnnConvolutionForward(h, ...);\n")
        self.assertEqual([(f.data["op"], f.line) for f in found], [("conv", 2)])
        self.assertEqual(self.findings("cudnnCreateConvolutionDescriptor(&d);\n", {"tf32"}), [])

    def test_cublas_tf32_is_a_matmul_finding_and_unnamed_tf32_has_no_kind(self) -> None:
        found = self.findings("cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);\n")
        self.assertEqual([f.data.get("op") for f in found], ["matmul"])
        self.assertEqual(self.findings("cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"), [])
        wmma = self.findings("wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;\n")
        self.assertEqual([f.data.get("op") for f in wmma], [None])

    def test_the_reference_excuses_only_the_kinds_it_runs_in_tf32(self) -> None:
        conv = self.findings("cudnnSetConvolutionMathType(d, CUDNN_DEFAULT_MATH);\n")[0]
        matmul = self.findings("x = CUBLAS_COMPUTE_32F_FAST_TF32;\n")[0]
        unnamed = self.findings("asm(\"cvt.rna.tf32.f32 %0, %1;\");\n")[0]
        self.assertTrue(reference_runs_in_tf32(conv, self.CONV_TF32))      # eager's convolutions are TF32
        self.assertFalse(reference_runs_in_tf32(matmul, self.CONV_TF32))   # its matmuls are not
        self.assertFalse(reference_runs_in_tf32(unnamed, self.CONV_TF32))  # nor is every heavy op
        both = dict(self.CONV_TF32, tf32_ops=["aten::convolution", "aten::mm"])
        self.assertTrue(all(reference_runs_in_tf32(f, both) for f in (conv, matmul, unnamed)))
        for reference in (self.NO_TF32, self.MATMUL_ONLY_FP32, {}):
            self.assertFalse(any(reference_runs_in_tf32(f, reference) for f in (conv, matmul, unnamed)))
        fp16 = self.findings("__half h;\n")[0]
        self.assertFalse(reference_runs_in_tf32(fp16, both))


class VerifierExcuseTest(unittest.TestCase):
    """The verifier adds a static TF32 finding unless the reference runs that kind of op in TF32
    and the job keeps eager's precision; a job that asks for exact fp32 excuses none."""

    def added(self, precision: str, reference: dict) -> list[str]:
        from stitchcuda_harness.verdict import Verdict
        from stitchcuda_harness.verifier import Verification
        from stitchcuda_harness.verify_config import VerifyConfig
        v = Verification.__new__(Verification)
        v.config = VerifyConfig.from_params({"precision": precision})
        v.verdict = Verdict()
        v.verdict.reference_precision = reference
        code = "cudnnSetConvolutionMathType(d, CUDNN_DEFAULT_MATH);\nx = CUBLAS_COMPUTE_32F_FAST_TF32;\n"
        v._add_static(scan_cxx(code, "c.cu", 1, StaticContext("task"), torch_allowed=False))
        return [f.data.get("op") for f in v.verdict.findings]

    def test_a_tf32_convolution_passes_where_eager_runs_it_and_a_tf32_matmul_does_not(self) -> None:
        conv_tf32 = {"conv_ops": ["aten::convolution"], "matmul_ops": ["aten::mm"], "tf32_ops": ["aten::convolution"]}
        self.assertEqual(self.added("eager", conv_tf32), ["matmul"])
        self.assertEqual(sorted(self.added("fp32", conv_tf32)), ["conv", "matmul"])
        self.assertEqual(sorted(self.added("eager", {})), ["conv", "matmul"])

    def test_config_reads_precision(self) -> None:
        from stitchcuda_harness.verify_config import VerifyConfig
        self.assertEqual(VerifyConfig.from_params({}).precision, "eager")
        self.assertEqual(VerifyConfig.from_params({"precision": "fp32"}).precision, "fp32")
