"""verify under KernelBench's rules (issue 20), on CPU tensors: both models built under one seed
and nothing copied (weights_differ), buffers compared after the trials (buffer_mismatch), the
fp64-truth rule, the verifier sizing itself to a memory budget, its own failures reported as
verifier_error and never as the candidate's, and the `--kernelbench` protocol count."""
from __future__ import annotations

import os
import tempfile
import unittest
from unittest import mock

import torch

from tests.harness import REPO
from stitchcuda_harness import tolerance
from stitchcuda_harness.kernelbench_protocol import kernelbench_check
from stitchcuda_harness.nvcc_build import find_nvcc
from stitchcuda_harness.verifier import verify
from stitchcuda_harness.verify_config import VerifyConfig

HERE = os.path.join(REPO, "tests", "harness")
RULES = os.path.join(HERE, "kernelbench_rules")
LINEAR_BN = os.path.join(HERE, "fixtures", "linear_batchnorm.py")
LOSSY = os.path.join(HERE, "fixtures", "lossy_shift.py")
SMALL = os.path.join(HERE, "fixtures", "small_elementwise.py")
CACHE = tempfile.gettempdir() + "/stitch-verify-cpu"


def run(task: str, candidate: str, **params: object) -> dict:
    cfg = VerifyConfig.from_params({"timing": False, "device": "cpu", "cacheDir": CACHE, **params})
    return verify(task, os.path.join(RULES, candidate) if not os.path.isabs(candidate) else candidate, cfg).to_json()


class SeededConstructionTest(unittest.TestCase):
    def test_modelnew_built_like_model_holds_its_weights(self) -> None:
        v = run(LINEAR_BN, "same_modules.py")
        # It computes with nn modules, which the compute guard names; its state and outputs are right.
        self.assertEqual(set(v["failed_checks"]), {"pytorch_compute"})
        self.assertEqual(v["correctness_rule"], "reference")
        self.assertTrue(v["kernelbench_strict"])

    def test_empty_parameters_are_not_copied_over(self) -> None:
        v = run(LINEAR_BN, "empty_parameters.py")
        self.assertIn("weights_differ", v["failed_checks"])
        msg = next(f["message"] for f in v["findings"] if f["check"] == "weights_differ")
        self.assertIn("'weight'", msg)
        self.assertIn("'fc.weight'", msg)
        self.assertIn("output_mismatch", v["failed_checks"])  # and its outputs are garbage too


class BuffersAfterTrialsTest(unittest.TestCase):
    def test_running_statistics_that_never_move_are_named(self) -> None:
        v = run(LINEAR_BN, "stale_running_stats.py")
        self.assertIn("buffer_mismatch", v["failed_checks"])
        self.assertNotIn("output_mismatch", v["failed_checks"])  # its outputs use batch statistics: right
        names = " ".join(f["message"] for f in v["findings"] if f["check"] == "buffer_mismatch")
        self.assertIn("bn.running_mean", names)
        self.assertIn("bn.num_batches_tracked", names)

    def test_same_modules_move_their_buffers_alike(self) -> None:
        self.assertNotIn("buffer_mismatch", run(LINEAR_BN, "same_modules.py")["failed_checks"])


class TruthRuleTest(unittest.TestCase):
    def test_closer_to_the_truth_than_eager_passes_its_values_by_the_truth_rule(self) -> None:
        v = run(LOSSY, "exact_shift.py")
        self.assertEqual(set(v["failed_checks"]), {"pytorch_compute"})  # its copy_ is PyTorch's; its values pass
        self.assertEqual(v["correctness_rule"], "truth")
        self.assertFalse(v["kernelbench_strict"])  # KernelBench's 1e-4 against eager would reject it
        out = v["trials"][1]["outputs"][0]
        self.assertEqual(out["rule"], "truth")
        self.assertGreater(out["mismatched"], 0)
        self.assertLess(out["candidate_truth_err"], 1e-9)
        self.assertGreater(out["reference_truth_err"], 1e-4)

    def test_further_from_the_truth_than_eager_fails(self) -> None:
        v = run(LOSSY, "off_shift.py")
        self.assertIn("output_mismatch", v["failed_checks"])
        self.assertIsNone(v["correctness_rule"])
        out = v["trials"][0]["outputs"][0]
        self.assertIsNone(out["rule"])
        self.assertGreater(out["candidate_truth_err"], out["reference_truth_err"])
        finding = next(f for f in v["findings"] if f["check"] == "output_mismatch")
        self.assertIn("fp64 truth", finding["message"])
        # the distances travel as numbers too, for the brain (LayoutSearch.h)
        self.assertEqual(finding["data"]["candidate_truth_err"], out["candidate_truth_err"])
        self.assertEqual(finding["data"]["reference_truth_err"], out["reference_truth_err"])

    def test_truth_that_cannot_fit_whole_is_taken_on_a_sample_of_rows(self) -> None:
        v = run(LOSSY, "exact_shift.py", memoryBudget=4096)
        self.assertEqual(v["memory"]["kept_on"], "cpu")
        self.assertEqual(set(v["failed_checks"]), {"pytorch_compute"})
        self.assertEqual(v["correctness_rule"], "truth")
        sample = v["trials"][0]["outputs"][0]["truth_rows"]
        self.assertEqual(sample["of"], 64)
        self.assertLess(sample["rows"], 64)
        self.assertIn("GiB free", sample["why"])
        self.assertIn("rows", v["ground_truth"]["sampled"])

    def test_a_wrong_row_outside_the_sample_still_fails(self) -> None:
        v = run(LOSSY, "off_shift.py", memoryBudget=4096)
        self.assertIn("output_mismatch", v["failed_checks"])
        msg = next(f["message"] for f in v["findings"] if f["check"] == "output_mismatch")
        self.assertIn("rows)", msg)


class MemoryBudgetTest(unittest.TestCase):
    def test_large_trials_keep_their_checks_on_the_cpu(self) -> None:
        # Too big for the budget: inputs go to the reference without a clone, later checks read
        # copies kept on the CPU; every check still runs and an honest candidate still passes them.
        v = run(SMALL, os.path.join(HERE, "adversarial", "pytorch_compute.py"), memoryBudget=4096)
        self.assertEqual(v["memory"]["kept_on"], "cpu")
        self.assertEqual(set(v["failed_checks"]), {"pytorch_compute"})
        self.assertIn("buffer_reuse", v["durations_s"])

    def test_a_cheat_is_still_caught_on_the_low_memory_path(self) -> None:
        v = run(os.path.join(HERE, "fixtures", "relu_nonneg.py"), os.path.join(HERE, "adversarial", "return_input.py"),
                memoryBudget=4096)
        self.assertTrue({"output_mismatch", "output_aliases_input"} <= set(v["failed_checks"]))


class VerifierErrorTest(unittest.TestCase):
    def test_allocator_failure_inside_compare_is_the_verifiers(self) -> None:
        oom = RuntimeError("CUDA out of memory. Tried to allocate 12.00 GiB (GPU 0; 79.10 GiB total capacity)")
        with mock.patch("stitchcuda_harness.verifier.compare", side_effect=oom), \
             mock.patch("traceback.print_exc"):
            v = run(LINEAR_BN, "same_modules.py")
        self.assertEqual(v["status"], "verifier_error")
        self.assertFalse(v["passed"])
        finding = next(f for f in v["findings"] if f["check"] == "verifier_error")
        self.assertEqual(finding["evidence"], "verifier")
        self.assertEqual(finding["data"]["stage"], "correctness")
        self.assertTrue(finding["data"]["out_of_memory"])
        self.assertIn("not the candidate", finding["message"])
        for candidate_check in ("output_mismatch", "candidate_runtime_error", "weights_differ"):
            self.assertNotIn(candidate_check, v["failed_checks"])

    def test_comparison_whose_allocator_runs_out_of_memory_is_the_verifiers(self) -> None:
        # The real comparison runs; the allocator under it fails as PyTorch's CUDA caching allocator
        # does when a 6.4 GB problem's slices no longer fit beside the trial's tensors.
        class FailingAllocator:
            def __getattr__(self, name: str) -> object:
                return getattr(torch, name)

            def zeros(self, *args: object, **kwargs: object) -> torch.Tensor:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 79.10 GiB "
                                                  "total capacity; 78.95 GiB already allocated)")

        with mock.patch.object(tolerance, "torch", FailingAllocator()), mock.patch("traceback.print_exc"):
            v = run(LINEAR_BN, "same_modules.py")
        self.assertEqual(v["status"], "verifier_error")
        finding = next(f for f in v["findings"] if f["check"] == "verifier_error")
        self.assertEqual((finding["data"]["stage"], finding["data"]["out_of_memory"]), ("correctness", True))
        self.assertIn("OutOfMemoryError", finding["message"])
        for comparison_check in ("output_mismatch", "nan_or_inf", "shape_mismatch", "candidate_runtime_error"):
            self.assertNotIn(comparison_check, v["failed_checks"])

    def test_candidates_own_out_of_memory_stays_the_candidates(self) -> None:
        fd, cand = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x, y):\n"
                    "        raise RuntimeError('CUDA out of memory. Tried to allocate 64.00 GiB')\n")
        self.addCleanup(os.unlink, cand)
        v = run(SMALL, cand)
        self.assertEqual(v["status"], "failed")
        self.assertIn("candidate_runtime_error", v["failed_checks"])
        self.assertNotIn("verifier_error", v["failed_checks"])
        self.assertIn("out of memory", next(f["message"] for f in v["findings"] if f["check"] == "candidate_runtime_error"))


class StageReportTest(unittest.TestCase):
    def test_report_says_whose_code_runs(self) -> None:
        # What a host reads when its deadline passes: the reference and the comparisons are the
        # verifier's own work; the candidate's import and each of its forwards are the candidate's.
        heard: list[tuple[str, str]] = []
        cfg = VerifyConfig.from_params({"timing": False, "device": "cpu", "cacheDir": CACHE, "trials": 3})
        verify(LINEAR_BN, os.path.join(RULES, "same_modules.py"), cfg, lambda stage, running: heard.append((stage, running)))
        self.assertLess(heard.index(("reference", "verifier")), heard.index(("load", "candidate")))
        trials = [running for stage, running in heard if stage == "correctness"]
        # Four trials (three seeded, one other distribution): the candidate runs, then the verifier's reference and comparison.
        self.assertEqual(trials, ["verifier"] + ["candidate", "verifier"] * 4)


class NeedsGpuTest(unittest.TestCase):
    def test_cuda_candidate_without_a_gpu_is_said_plainly(self) -> None:
        fd, cand = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x, y):\n"
                    "        raise RuntimeError('Found no NVIDIA driver on your system.')\n")
        self.addCleanup(os.unlink, cand)
        v = run(SMALL, cand)
        self.assertEqual((v["status"], v["failed_checks"]), ("needs_gpu", ["needs_gpu"]))
        self.assertEqual(v["trials"], [])

    @unittest.skipIf(torch.cuda.is_available() or find_nvcc() is None, "needs nvcc and no GPU")
    def test_fast_path_kernel_without_a_gpu(self) -> None:
        v = run(SMALL, os.path.join(HERE, "honest", "elementwise_chain"))
        self.assertEqual(v["status"], "needs_gpu")  # not "FAILED ... cudaError 35"
        self.assertRegex(v["findings"][0]["message"], r"cudaError (35|100)")


class KernelBenchProtocolTest(unittest.TestCase):
    def check(self, candidate: str) -> dict:
        return kernelbench_check(LINEAR_BN, os.path.join(RULES, candidate), {"device": "cpu", "cacheDir": CACHE})

    def test_modelnew_built_like_model_is_correct_in_every_trial(self) -> None:
        r = self.check("same_modules.py")
        self.assertEqual((r["status"], r["weights"], r["correct_1e-4"], r["correct_1e-2"]), ("passed", "same", 5, 5))
        self.assertEqual(len({t["seed"] for t in r["per_trial"]}), 5)

    def test_empty_parameters_fail_the_count(self) -> None:
        r = self.check("empty_parameters.py")
        self.assertEqual(r["status"], "failed")
        self.assertLess(r["correct_1e-2"], 5)
        self.assertIn("differs", r["weights"])


if __name__ == "__main__":
    unittest.main()
