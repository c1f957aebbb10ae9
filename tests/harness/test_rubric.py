"""The rubric reward on recorded verdicts and real sources (issue 22's CPU tests): cheats get
anti-hacking 0 and reward 0 whatever their speed, a shared-memory tiled kernel scores higher on
CUDA engineering than a naive one, coverage is the plan's, a refinement is judged against the
feedback it was given. The cheats' verdicts are the GPU suite's, recorded on an H200
(tests/harness/results/gpu_suite_2026-11-22_h200.json)."""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import unittest

from tests.harness import REPO
from stitchcuda_harness.candidate_files import resolve_candidate
from stitchcuda_harness.errors import HarnessError
from stitchcuda_harness.rubric import BUILD_CHECKS, CORRECTNESS_CHECKS, GUARD_CHECKS, score
from stitchcuda_harness.rubric_engineering import measure_engineering
from stitchcuda_harness.rubric_metrics import TENSOR_PIPE_MIN_PCT, Measured, Profile, parse_ncu_csv
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


PROFILES = os.path.join(REPO, "tests", "profiling", "fixtures", "recorded")  # ncu CSVs NcuRunner wrote on an H200
CHAIN_PROFILE = os.path.join(PROFILES, "ncu_memory_bound.csv")  # honest/elementwise_chain: chain_vec4 alone
FIVE_OPS = {"operators": 5, "coveredOperators": 5, "timeShare": 1.0, "timeBasis": "bytes"}


class MeasuredEngineeringTest(unittest.TestCase):
    """The engineering dimension with Nsight Compute's metrics of the candidate's kernels (recorded
    by NcuRunner on an H200, tests/profiling/fixtures/README.md): confirmed, contradicted, absent."""
    HONEST = os.path.join(HERE, "honest", "elementwise_chain")
    DEAD = os.path.join(HERE, "rubric", "chain_dead_paths")  # the same launched kernel, plus code that never runs

    def engineering(self, candidate: str, **params) -> dict:
        return run(TASK, candidate, honest_verdict(), coverage=FIVE_OPS, **params)["rubric"]["cuda_engineering"]

    def test_metrics_confirm_the_fused_kernel_and_credit_its_bandwidth(self) -> None:
        eng = self.engineering(self.HONEST, profile=CHAIN_PROFILE)
        f = eng["features"]
        self.assertEqual(eng["metrics"]["read"], "ncu")
        self.assertEqual([(k["name"], k["role"]) for k in eng["metrics"]["kernels"]], [("chain_vec4", "own")])
        # One launch per forward does the five operators: fusion measured, not only read from the source.
        self.assertEqual((f["fusion"]["present"], f["fusion"]["measured"]), (True, "confirmed"))
        self.assertIn("ncu: 5 operators in 1 launch of the candidate's kernels per forward", f["fusion"]["evidence"])
        # Memory-bound at 74.5% of the DRAM peak, moving 0.85x the bytes the task must: no shared
        # memory, and credit for efficiency instead of it.
        bw = f["bandwidth_efficiency"]
        self.assertTrue(bw["present"], bw)
        self.assertTrue(any("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed = 74.5%" in e for e in bw["evidence"]), bw)
        self.assertTrue(any("0.85x the 100.7 MB the task must move" in e for e in bw["evidence"]), bw)
        self.assertFalse(f["shared_memory"]["present"])
        # What the sections do not count stays as the compiled code says, and says so.
        self.assertTrue(f["vectorized_access"]["present"])
        self.assertTrue(f["vectorized_access"]["measured"].startswith("not measured"))
        self.assertAlmostEqual(eng["score"], 0.15 + 0.2 + 0.3)  # vector loads, fusion, bandwidth

    def test_metrics_contradict_code_that_never_runs(self) -> None:
        static = self.engineering(self.DEAD)
        for feature in ("shared_memory", "tiling", "tensor_cores", "vectorized_access"):
            self.assertTrue(static["features"][feature]["present"], (feature, static["features"][feature]))
        measured = self.engineering(self.DEAD, profile=CHAIN_PROFILE)
        f = measured["features"]
        for feature in ("shared_memory", "tiling", "tensor_cores"):
            with self.subTest(feature):
                self.assertFalse(f[feature]["present"], f[feature])
                self.assertEqual(f[feature]["measured"], "contradicted")
        self.assertIn("ncu: chain_vec4: launch__shared_mem_per_block_static+dynamic = 0 B", f["shared_memory"]["evidence"])
        # The FP32 kernel's HMMA-pipe reading is under the noise floor: no tensor-core credit.
        self.assertTrue(any(e.startswith("ncu: chain_vec4: sm__pipe_tensor") and "idle" in e
                            for e in f["tensor_cores"]["evidence"]), f["tensor_cores"])
        # Three kernels in the source, one launched: fusion is measured from the launch.
        self.assertEqual((f["fusion"]["present"], f["fusion"]["measured"]), (True, "found by measurement"))
        # Read from the code, the dead paths earn 0.3 over the honest candidate; measured, nothing:
        # the same score as the honest candidate's, whose launched kernel is the same.
        self.assertAlmostEqual(static["score"], self.engineering(self.HONEST)["score"] + 0.3)
        self.assertAlmostEqual(measured["score"], self.engineering(self.HONEST, profile=CHAIN_PROFILE)["score"])

    def test_without_a_profile_the_score_is_the_code_reading(self) -> None:
        eng = self.engineering(self.HONEST)
        self.assertEqual(eng["metrics"], {"read": "none (no profile)"})
        self.assertAlmostEqual(eng["score"], 0.15 + 0.2)  # vector loads and fusion, as before metrics
        self.assertFalse(eng["features"]["bandwidth_efficiency"]["present"])
        self.assertEqual(eng["features"]["bandwidth_efficiency"]["evidence"], ["needs Nsight Compute metrics: none (no profile)"])
        self.assertFalse(any("measured" in f for f in eng["features"].values()))
        dead = self.engineering(self.DEAD)
        self.assertAlmostEqual(dead["score"], 0.15 + 0.15 + 0.2 + 0.15)  # shared, tiling, tensor cores, vectors

    def test_a_candidate_folder_keeps_its_profile_as_ncu_csv(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            cand = os.path.join(d, "c1")
            shutil.copytree(self.HONEST, cand)
            shutil.copy(CHAIN_PROFILE, os.path.join(cand, "ncu.csv"))
            eng = self.engineering(cand)
            self.assertEqual((eng["metrics"]["read"], eng["metrics"]["source"]), ("ncu", "candidate folder"))
            self.assertTrue(eng["features"]["bandwidth_efficiency"]["present"])
            with open(os.path.join(cand, "ncu.csv"), "w") as f:
                f.write("==ERROR== the application returned an error\n")
            eng = self.engineering(cand)
            self.assertTrue(eng["metrics"]["read"].startswith("none ("), eng["metrics"])
            self.assertAlmostEqual(eng["score"], 0.15 + 0.2)

    def test_bandwidth_needs_the_bytes_the_task_must_move(self) -> None:
        verdict = honest_verdict()
        verdict["timing"] = {k: v for k, v in verdict["timing"].items() if k != "roofline"}
        eng = run(TASK, self.HONEST, verdict, coverage=FIVE_OPS, profile=CHAIN_PROFILE)["rubric"]["cuda_engineering"]
        bw = eng["features"]["bandwidth_efficiency"]
        self.assertFalse(bw["present"])
        self.assertTrue(bw["evidence"][-1].startswith("traffic not judged"), bw)
        # A forward that moves 2x the bytes it must is not efficient at any bandwidth.
        verdict["timing"]["roofline"] = {"bytes": 85091584 / 2}
        bw = run(TASK, self.HONEST, verdict, coverage=FIVE_OPS, profile=CHAIN_PROFILE)["rubric"]["cuda_engineering"]["features"]["bandwidth_efficiency"]
        self.assertFalse(bw["present"])
        self.assertIn("2.00x", bw["evidence"][-1])

    def test_a_profile_given_that_is_not_ncus_is_an_error(self) -> None:
        with self.assertRaises(HarnessError):
            self.engineering(self.HONEST, profile=os.path.join(HERE, "rubric", "matmul_task.py"))
        with self.assertRaises(HarnessError):
            self.engineering(self.HONEST, profile=os.path.join(HERE, "no_such_profile.csv"))


class NcuProfileReadingTest(unittest.TestCase):
    """The counters the rubric reads, from the three recorded CSVs, and the judges on their kernels."""

    def kernels(self, name: str) -> list:
        with open(os.path.join(PROFILES, name)) as f:
            return parse_ncu_csv(f.read())

    def test_the_recorded_kernels_and_their_counters(self) -> None:
        (chain,) = self.kernels("ncu_memory_bound.csv")
        self.assertEqual(chain.base_name, "chain_vec4")
        self.assertAlmostEqual(chain.duration_us, 23.776)
        self.assertEqual(chain.dram_pct, ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 74.51))
        self.assertEqual((chain.shared_bytes, chain.barriers), (0.0, 0.0))
        self.assertEqual(chain.dram_bytes, 67117056 + 17974528)
        self.assertLess(chain.tensor_pct[1], TENSOR_PIPE_MIN_PCT)  # 1.2% on an FP32 kernel: the noise floor
        (gemm,) = self.kernels("ncu_compute_bound.csv")  # cuBLAS's FP32 SGEMM, 4096^3
        self.assertTrue(gemm.base_name.startswith("sm80_xmma_gemm_f32f32"))
        self.assertEqual((gemm.shared_bytes, gemm.barriers), (67584.0, 1.0))
        self.assertEqual(gemm.tensor_pct[1], 0.0)
        self.assertGreater(gemm.sm_pct[1], gemm.dram_pct[1])
        names = [k.base_name for k in self.kernels("ncu_small_convnet.csv")]
        self.assertEqual(names[:4], ["implicit_convolve_sgemm", "elementwise_kernel", "vectorized_elementwise_kernel",
                                     "max_pool_forward_nchw"])
        self.assertEqual(names[5], "softmax_warp_forward")

    def test_judges_on_the_library_kernel(self) -> None:
        # A source that calls cuBLAS: the non-PyTorch kernels are its library calls'. The recorded
        # FP32 SGEMM allocates shared memory behind a barrier, keeps the tensor pipe idle and is
        # compute-bound: a tensor-core claim for that call is contradicted, and no bandwidth credit.
        profile = Profile("ncu_compute_bound.csv", "given", self.kernels("ncu_compute_bound.csv"))
        m = Measured(profile, "cublasSgemm(handle, ...);", library_calls=1)
        self.assertEqual((len(m.own), len(m.library)), (0, 1))
        state, evidence = m.tensor_cores(["source: cublasSgemm"], re.compile(r"cublas"))
        self.assertEqual(state, "contradicted", evidence)
        self.assertFalse(m.bandwidth(4096 * 4096 * 4 * 3)[0])
        # Its shared memory and barrier are cuBLAS's, not the candidate's: nothing of its own ran.
        self.assertEqual(m.shared_memory()[0], "contradicted")
        # Named as the candidate's own kernel, the same counters confirm shared memory and tiling.
        own = Measured(profile, f"__global__ void {profile.kernels[0].base_name}(float* c) {{}}", library_calls=0)
        self.assertEqual((own.shared_memory()[0], own.tiling()[0]), ("confirmed", "confirmed"))
        self.assertIn("ncu: sm80_xmma_gemm", own.tiling()[1][0])
        # PyTorch's kernels are never a candidate's library calls.
        convnet = Measured(Profile("ncu_small_convnet.csv", "given", self.kernels("ncu_small_convnet.csv")), "", 1)
        self.assertEqual([convnet.role[k.id] for k in convnet.profile.kernels],
                         ["library", "pytorch", "pytorch", "pytorch", "library", "library"])


class CoverageTest(unittest.TestCase):
    def test_coverage_is_the_plans_operators_and_time(self) -> None:
        cover = {"operators": 10, "coveredOperators": 8, "timeShare": 0.6, "timeBasis": "profile"}
        r = run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), honest_verdict(), coverage=cover)
        c = r["rubric"]["operator_coverage"]
        self.assertAlmostEqual(c["score"], 0.7)
        self.assertEqual((c["operators"], c["coveredOperators"], c["timeBasis"]), (10, 8, "profile"))
        self.assertIsNone(run(TASK, os.path.join(HERE, "honest", "elementwise_chain"), honest_verdict())
                          ["rubric"]["operator_coverage"]["score"])

    FULL = {"operators": 5, "coveredOperators": 5, "timeShare": 1.0, "timeBasis": "bytes"}

    def test_a_pytorch_only_candidate_covers_nothing_whatever_the_graph_says(self) -> None:
        c = run(TASK, os.path.join(HERE, "adversarial", "pytorch_compute.py"), honest_verdict(), coverage=self.FULL)
        cover = c["rubric"]["operator_coverage"]
        self.assertEqual((cover["score"], cover["coveredOperators"], cover["operators"]), (0.0, 0, 5))
        self.assertEqual(cover["evidenceSource"], "source")
        self.assertIn("no CUDA kernel or library call of its own", cover["evidence"][0])

    def test_the_kernel_trace_says_whether_the_candidates_own_kernels_ran(self) -> None:
        pytorch = {"name": "void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda>(int)"}
        honest = os.path.join(HERE, "honest", "elementwise_chain")
        traced = lambda *kernels: {**honest_verdict(), "kernels": list(kernels)}  # noqa: E731
        cover = run(TASK, honest, traced(pytorch), coverage=self.FULL)["rubric"]["operator_coverage"]
        self.assertEqual((cover["score"], cover["evidenceSource"]), (0.0, "kernel trace"))
        self.assertIn("none of the 1 launches", cover["evidence"][0])
        cover = run(TASK, honest, traced({"name": "chain_vec4(float const*, float const*, float*, long)"}),
                    coverage=self.FULL)["rubric"]["operator_coverage"]
        self.assertEqual((cover["score"], cover["evidenceSource"]), (1.0, "kernel trace"))

    def test_without_a_gpu_the_score_reads_the_code_and_says_what_needs_one(self) -> None:
        r = score(TASK, os.path.join(HERE, "adversarial", "pytorch_compute.py"), {"noGpu": True, "cacheDir": CACHE})
        self.assertEqual(r["verdictStatus"], "needs_gpu")
        self.assertIsNone(r["rule"]["score"])
        self.assertEqual(r["reward"], 0.0)  # its static guards still see PyTorch compute
        self.assertEqual(r["rubric"]["anti_hacking"]["checks"]["pytorch_compute"], "failed")
        self.assertEqual(r["rubric"]["operator_coverage"]["score"], 0.0)
        self.assertEqual([n.split(":")[0] for n in r["needsGpu"]], ["rule", "anti_hacking", "operator_coverage", "cuda_engineering"])


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
