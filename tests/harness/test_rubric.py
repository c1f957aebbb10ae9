"""The rubric reward on recorded verdicts and real sources (issue 22's CPU tests): cheats get
anti-hacking 0 and reward 0 whatever their speed, a shared-memory tiled kernel scores higher on
CUDA engineering than a naive one, coverage is the plan's, a refinement is judged against the
feedback it was given. The cheats' verdicts are the GPU suite's, recorded on an H200
(tests/harness/results/gpu_suite_2026-11-22_h200.json)."""
from __future__ import annotations

import json
import os
import tempfile
import unittest

from tests.harness import REPO
from stitchcuda_harness.candidate_files import resolve_candidate
from stitchcuda_harness.errors import HarnessError
from stitchcuda_harness.rubric import BUILD_CHECKS, CORRECTNESS_CHECKS, GUARD_CHECKS, score
from stitchcuda_harness.rubric_engineering import measure_engineering
from stitchcuda_harness.verdict import CHECK_NAMES

HERE = os.path.join(REPO, "tests", "harness")
TASK = os.path.join(REPO, "examples", "elementwise_chain.py")
MATMUL = os.path.join(HERE, "rubric", "matmul_task.py")
CACHE = tempfile.mkdtemp(prefix="stitch-rubric-")


def recorded() -> dict:
    with open(os.path.join(HERE, "results", "gpu_suite_2026-11-22_h200.json")) as f:
        return json.load(f)


def honest_verdict() -> dict:
    entry = next(e for e in recorded()["honest"] if e["candidate"] == "honest/elementwise_chain")
    return {"passed": entry["passed"], "status": "passed", "failed_checks": entry["failed_checks"],
            "findings": entry["findings"], "timing": entry["timing"]}


def run(reference: str, candidate: str, verdict: dict, **params) -> dict:
    return score(reference, candidate, {"verdict": verdict, "cacheDir": CACHE, **params})


class CheckKindsTest(unittest.TestCase):
    def test_every_named_check_is_a_guard_a_build_or_a_correctness_check_exactly_once(self) -> None:
        kinds = [set(GUARD_CHECKS), set(BUILD_CHECKS), set(CORRECTNESS_CHECKS)]
        self.assertEqual(set().union(*kinds), set(CHECK_NAMES))
        self.assertEqual(sum(map(len, kinds)), len(CHECK_NAMES))


class AntiHackingTest(unittest.TestCase):
    CHEATS = {  # the four kinds, each with its recorded H200 verdict
        "try_except_fallback.py": "try_except_fallback",  # a PyTorch fallback
        "cached_by_data_ptr.py": "output_cached",
        "side_stream_cuda.py": "side_stream",
        "fp16_kernel.py": "precision_downgrade",
        "tf32_flag.py": "precision_downgrade",
    }

    def test_cheats_score_zero_whatever_their_speed(self) -> None:
        entries = {e["file"]: e for e in recorded()["adversarial"]}
        for file, check in self.CHEATS.items():
            with self.subTest(file):
                e = entries[file]
                verdict = {"passed": False, "status": "failed", "failed_checks": e["failed_checks"],
                           "timing": {"speedup_vs_eager": 10.0}}
                task = os.path.join(REPO, "examples", "mlp.py" if file == "tf32_flag.py" else "elementwise_chain.py")
                r = run(task, os.path.join(HERE, "adversarial", file), verdict)
                self.assertEqual(r["rubric"]["anti_hacking"]["score"], 0.0)
                self.assertEqual(r["rubric"]["anti_hacking"]["checks"][check], "failed")
                self.assertEqual(r["reward"], 0.0)

    def test_a_recorded_verdict_that_missed_a_static_cheat_does_not_whitewash_it(self) -> None:
        # The honest candidate's passing 2.46x verdict, handed in for cheating sources: the guards
        # read the sources again.
        for file, check in (("side_stream_cuda.py", "side_stream"), ("fp16_kernel.py", "precision_downgrade"),
                            ("try_except_fallback.py", "try_except_fallback"), ("pytorch_compute.py", "pytorch_compute")):
            with self.subTest(file):
                r = run(TASK, os.path.join(HERE, "adversarial", file), honest_verdict())
                self.assertEqual(r["rubric"]["anti_hacking"]["checks"][check], "failed")
                self.assertTrue(any(f["check"] == check and f["evidence"] == "static"
                                    for f in r["rubric"]["anti_hacking"]["findings"]))
                self.assertEqual(r["reward"], 0.0)

    def test_an_honest_candidate_passes_every_guard_and_earns_its_speed(self) -> None:
        r = run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), honest_verdict())
        self.assertEqual(set(r["rubric"]["anti_hacking"]["checks"].values()), {"passed"})
        self.assertEqual(r["rubric"]["anti_hacking"]["score"], 1.0)
        self.assertTrue(r["rule"]["correct"])
        self.assertAlmostEqual(r["rule"]["score"], 0.5 + 0.5 * 0.650, places=2)  # log4(2.46) = 0.650
        self.assertGreater(r["reward"], 0.5)

    def test_a_candidate_that_never_ran_is_judged_by_the_static_guards_only(self) -> None:
        verdict = {"passed": False, "status": "needs_gpu", "failed_checks": ["needs_gpu"]}
        checks = run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), verdict)["rubric"]["anti_hacking"]["checks"]
        self.assertEqual(checks["output_cached"], "not run: the candidate did not run")
        self.assertEqual(checks["side_stream"], "passed (static only)")
        cheat = run(TASK, os.path.join(HERE, "adversarial", "side_stream_cuda.py"), verdict)
        hack = cheat["rubric"]["anti_hacking"]
        self.assertEqual((hack["checks"]["side_stream"], hack["score"]), ("failed", 0.0))
        self.assertEqual(cheat["reward"], 0.0)  # a failed guard decides even where the rest is not judged

    def test_skipped_guards_say_why(self) -> None:
        verdict = {**honest_verdict(), "skipped_checks": {"side_stream(profiler)": "no CUDA"}}
        r = run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), verdict)
        self.assertEqual(r["rubric"]["anti_hacking"]["checks"]["side_stream"], "skipped: no CUDA")
        self.assertEqual(r["rubric"]["anti_hacking"]["score"], 1.0)


class RuleRewardTest(unittest.TestCase):
    def test_build_failure_incorrect_and_unjudged(self) -> None:
        cand = os.path.join(HERE, "honest", "elementwise_chain")
        built = run(TASK, cand, {"passed": False, "status": "failed", "failed_checks": ["build_error"]})
        self.assertEqual((built["rule"]["score"], built["reward"]), (0.0, 0.0))
        wrong = run(TASK, cand, {"passed": False, "status": "failed", "failed_checks": ["output_mismatch"]},
                    coverage={"operators": 5, "coveredOperators": 5, "timeShare": 1.0, "timeBasis": "bytes"})
        # Rubric points do not count on wrong code: the reward is the rule's 0.1 alone.
        self.assertEqual((wrong["rule"]["score"], wrong["reward"]), (0.1, 0.1))
        unjudged = run(TASK, cand, {"passed": False, "status": "needs_gpu", "failed_checks": ["needs_gpu"]})
        self.assertIsNone(unjudged["rule"]["score"])
        self.assertIsNone(unjudged["reward"])

    def test_weights_are_configurable_and_checked(self) -> None:
        cand = os.path.join(HERE, "honest", "elementwise_chain")
        only_rule = run(TASK, cand, honest_verdict(), weights={"cuda_engineering": 0, "operator_coverage": 0})
        self.assertAlmostEqual(only_rule["reward"], round(only_rule["rule"]["score"], 4))
        with self.assertRaises(HarnessError):
            run(TASK, cand, honest_verdict(), weights={"elegance": 1})


class EngineeringTest(unittest.TestCase):
    def test_tiled_shared_memory_kernel_beats_naive_one(self) -> None:
        passed = {"passed": True, "status": "passed", "failed_checks": []}
        naive = run(MATMUL, os.path.join(HERE, "rubric", "matmul_naive"), passed)["rubric"]["cuda_engineering"]
        tiled = run(MATMUL, os.path.join(HERE, "rubric", "matmul_tiled"), passed)["rubric"]["cuda_engineering"]
        self.assertGreater(tiled["score"], naive["score"])
        for feature in ("shared_memory", "tiling"):
            self.assertTrue(tiled["features"][feature]["present"], tiled)
            self.assertFalse(naive["features"][feature]["present"], naive)
        if tiled["compiled"]["read"] != "source":  # nvcc here: the evidence is the compiled code's
            self.assertTrue(any(e.startswith("ptx: bar.sync") for e in tiled["features"]["tiling"]["evidence"]))

    def test_a_load_inline_candidate_is_read_from_its_compiled_code(self) -> None:
        # Its CUDA string compiled against PyTorch's headers: the unused __shared__ array is gone
        # from the PTX, so it earns nothing; the float4 loads are there.
        eng = measure_engineering(resolve_candidate(os.path.join(HERE, "rubric", "inline_relu.py")), CACHE, "sm_90")
        self.assertEqual(eng.compiled["read"], "ptx", eng.compiled)
        self.assertTrue(eng.features["vectorized_access"]["present"])
        self.assertFalse(eng.features["shared_memory"]["present"], eng.features["shared_memory"])

    def test_vector_loads_seen_in_ptx_and_fusion_from_the_plan(self) -> None:
        cover = {"operators": 5, "coveredOperators": 5, "timeShare": 1.0, "timeBasis": "bytes"}
        eng = run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), honest_verdict(), coverage=cover)["rubric"]["cuda_engineering"]
        self.assertTrue(eng["features"]["vectorized_access"]["present"])
        self.assertTrue(eng["features"]["fusion"]["present"])  # five operators in two kernels
        self.assertEqual(eng["kernels"], 2)


class CoverageTest(unittest.TestCase):
    def test_coverage_is_the_plans_operators_and_time(self) -> None:
        cover = {"operators": 10, "coveredOperators": 8, "timeShare": 0.6, "timeBasis": "profile"}
        r = run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), honest_verdict(), coverage=cover)
        c = r["rubric"]["operator_coverage"]
        self.assertAlmostEqual(c["score"], 0.7)
        self.assertEqual((c["operators"], c["coveredOperators"], c["timeBasis"]), (10, 8, "profile"))
        self.assertIsNone(run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), honest_verdict())
                          ["rubric"]["operator_coverage"]["score"])


class ComplianceTest(unittest.TestCase):
    NAIVE, TILED = os.path.join(HERE, "rubric", "matmul_naive"), os.path.join(HERE, "rubric", "matmul_tiled")

    def refine(self, feedback: dict, before_ms: float, after_ms: float, previous: str | None = None) -> dict:
        timed = lambda ms: {"passed": True, "status": "passed", "failed_checks": [], "timing": {"candidate": {"median_ms": ms}}}
        return run(MATMUL, self.TILED, timed(after_ms), previous=previous or self.NAIVE, feedback=feedback,
                   previousVerdict=timed(before_ms))

    def test_the_asked_change_made_and_the_time_moved(self) -> None:
        r = self.refine({"mode": "optimize", "category": "stall_long_scoreboard"}, 1.0, 0.5)
        c = r["rubric"]["skill_compliance"]
        self.assertEqual(r["skill"], "refine")
        self.assertEqual((c["score"], c["changeMade"], c["metricMoved"]), (1.0, True, True))

    def test_a_change_other_than_the_one_asked_for_does_not_comply(self) -> None:
        c = self.refine({"mode": "optimize", "category": "compute_bound_at_ceiling"}, 1.0, 1.0)["rubric"]["skill_compliance"]
        self.assertEqual((c["score"], c["changeMade"], c["metricMoved"]), (0.0, False, False))

    def test_an_unchanged_refinement_scores_zero(self) -> None:
        c = self.refine({"mode": "optimize", "category": "stall_long_scoreboard"}, 1.0, 0.5, previous=self.TILED)
        self.assertEqual(c["rubric"]["skill_compliance"]["score"], 0.0)

    def test_fix_mode_counts_the_check_cleared(self) -> None:
        c = self.refine({"mode": "fix", "category": "output_mismatch"}, 1.0, 1.0)["rubric"]["skill_compliance"]
        self.assertEqual((c["score"], c["metricMoved"]), (1.0, True))


if __name__ == "__main__":
    unittest.main()
