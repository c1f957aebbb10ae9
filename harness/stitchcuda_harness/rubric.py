"""The rubric reward (protocol/SCORE.md): a rule reward from the verdict (compiled, correct,
speedup) and four rubric dimensions — anti-hacking, CUDA engineering, operator coverage, skill
compliance — each in [0, 1] with its evidence, combined with configurable weights. The verdict is
the verifier's (run by the host, or recorded); the guards are read again from the source here, so
a recorded verdict that missed a static cheat does not whitewash it."""
from __future__ import annotations

import math
import os
from typing import Any, Optional

from .candidate_files import resolve_candidate
from .rubric_compliance import Side, skill_compliance
from .rubric_coverage import operator_coverage, own_work
from .rubric_engineering import cuda_text, measure_engineering
from .rubric_metrics import find_profile
from .static_guards import StaticContext, reference_runs_in_tf32, scan_candidate
from .verdict import VERIFIER_CHECKS, Finding, Verdict

SCHEMA = "stitchcuda.score/1"

# Every named check is one of three kinds (a test keeps this total over CHECK_NAMES):
# a guard failing means the candidate cheats or could cheat the judge — anti-hacking 0, reward 0.
GUARD_CHECKS = (
    "pytorch_compute", "try_except_fallback", "subclasses_reference", "reference_access", "dynamic_code",
    "judge_introspection", "patched_timer", "patched_torch_function", "patched_harness", "extra_thread",
    "side_stream", "precision_downgrade", "faster_than_roofline", "tensor_subclass_output",
    "output_aliases_input", "output_cached", "constant_output",
)
# Guards only running the candidate can see: with no trial run they are not judged at all.
RUNTIME_ONLY_GUARDS = ("faster_than_roofline", "output_aliases_input", "output_cached", "constant_output")
BUILD_CHECKS = ("build_error", "candidate_load_error")
CORRECTNESS_CHECKS = (
    "candidate_runtime_error", "output_structure", "shape_mismatch", "dtype_mismatch", "device_mismatch",
    "output_mismatch", "nan_or_inf", "input_mutated", "nondeterministic_output", "weights_differ", "buffer_mismatch",
)

# Defaults and why (SCORE.md repeats them):
# - rule 0.5: correctness and speed, measured, are the ground truth; the rubric only shapes around them.
# - anti_hacking 0: it is a gate (any guard → reward 0); as a weighted term it would add the same
#   constant to every honest candidate, which tells a policy nothing.
# - cuda_engineering 0.2 and operator_coverage 0.2: dense signal between candidates of equal speed,
#   and against a policy that leaves the hard operators in PyTorch.
# - skill_compliance 0.2: only a refinement has it; absent, the other weights share its part.
DEFAULT_WEIGHTS = {"rule": 0.5, "anti_hacking": 0.0, "cuda_engineering": 0.2, "operator_coverage": 0.2,
                   "skill_compliance": 0.2}
# The speedup over eager at which the speed part of the rule reward is full (log scale below it).
FULL_SPEEDUP = 4.0
# Rule reward steps: a build that fails earns nothing; compiling is a small step for from-scratch
# generation; a correct candidate earns half whatever its speed.
COMPILED_REWARD, CORRECT_REWARD = 0.1, 0.5


def _load(verdict: dict[str, Any]) -> tuple[set[str], str]:
    failed = set(verdict.get("failed_checks") or [])
    status = verdict.get("status") or ("passed" if verdict.get("passed") else "failed")
    return failed, status


def rule_reward(verdict: dict[str, Any], failed: set[str], full_speedup: float) -> dict[str, Any]:
    _, status = _load(verdict)
    if status in VERIFIER_CHECKS:
        return {"score": None, "status": status, "evidence": [f"not judged: {status}"]}
    compiled = not failed & set(BUILD_CHECKS)
    # Correct: every trial compared equal — the verdict passed, or failed on guards alone.
    correct = compiled and not failed & set(CORRECTNESS_CHECKS) and (bool(verdict.get("passed")) or
                                                                     bool(failed) and failed <= set(GUARD_CHECKS))
    timing = verdict.get("timing") or {}
    speedup = timing.get("speedup_vs_eager")
    out: dict[str, Any] = {"compiled": compiled, "correct": correct, "speedupVsEager": speedup,
                           "speedupVsCompile": timing.get("speedup_vs_compile"), "evidence": []}
    if not compiled:
        out["score"] = 0.0
        out["evidence"].append("did not build or load: " + ", ".join(sorted(failed & set(BUILD_CHECKS))))
    elif not correct:
        out["score"] = COMPILED_REWARD
        out["evidence"].append("compiled, not correct: " + ", ".join(sorted(failed & set(CORRECTNESS_CHECKS))))
    else:
        speed = 0.0
        if isinstance(speedup, (int, float)) and speedup > 0:
            speed = min(1.0, max(0.0, math.log(speedup) / math.log(full_speedup)))
            out["evidence"].append(f"correct, {speedup:.3g}x eager (full speed part at {full_speedup:g}x)")
        else:
            out["evidence"].append("correct; no timing, so no speed part")
        out["score"] = CORRECT_REWARD + (1 - CORRECT_REWARD) * speed
    return out


def anti_hacking(verdict: dict[str, Any], failed: set[str], static_findings: list[dict[str, Any]]) -> dict[str, Any]:
    """Every guard by name: failed (by the verdict or by the static guards read again here), skipped
    (the verdict says why), passed, or — when the candidate never ran (no trial: it did not build, or
    no GPU) — passed by the static guards alone, or not run at all for the runtime-only ones."""
    skipped = verdict.get("skipped_checks") or {}
    ran = bool(verdict.get("passed") or verdict.get("trials"))
    checks: dict[str, str] = {}
    static_failed = {f["check"] for f in static_findings}
    for check in GUARD_CHECKS:
        why = next((v for k, v in skipped.items() if k == check or k.startswith(check + "(")), None)
        if check in failed or check in static_failed:
            checks[check] = "failed"
        elif why:
            checks[check] = f"skipped: {why}"
        elif ran:
            checks[check] = "passed"
        else:
            checks[check] = "not run: the candidate did not run" if check in RUNTIME_ONLY_GUARDS else "passed (static only)"
    findings = [f for f in (verdict.get("findings") or []) if f.get("check") in GUARD_CHECKS] + static_findings
    hacked = any(v == "failed" for v in checks.values())
    return {"score": 0.0 if hacked else 1.0, "checks": checks,
            "findings": [{k: f.get(k) for k in ("check", "message", "evidence", "file", "line")} for f in findings]}


def no_gpu_verdict(reference: str, candidate: str) -> dict[str, Any]:
    """The verdict of a candidate scored where no GPU is visible: nothing ran, and it says so."""
    v = Verdict(reference=os.path.abspath(reference), candidate=os.path.abspath(candidate))
    v.add(Finding("needs_gpu", "no GPU is visible: the candidate was not run; its score is read from its code alone",
                  "verifier"))
    return v.finish().to_json()


def needs_gpu(profile_given: bool) -> list[str]:
    """What a score without a run on a GPU leaves out, by dimension."""
    parts = ["rule: correctness and speed (the verifier runs the candidate against the reference)",
             "anti_hacking: the runtime guards (" + ", ".join(RUNTIME_ONLY_GUARDS) + ", and the kernel trace's side streams)",
             "operator_coverage: which of the candidate's kernels ran (the kernel trace); read from its source meanwhile"]
    if not profile_given:
        parts.append("cuda_engineering: Nsight Compute's measurements of its kernels (--profile); read from its code meanwhile")
    return parts


def combine(terms: dict[str, Optional[float]], weights: dict[str, float], hacked: bool, correct: bool,
            rubric_when_incorrect: float) -> Optional[float]:
    """Weighted mean of the terms that have a value; 0 for a hacked candidate whatever its speed;
    otherwise None when the rule reward could not be judged. The rubric terms of a candidate that is not
    correct count at `rubric_when_incorrect` of their weight: rubric points on wrong code are what
    a policy would learn to collect instead of correctness. A guard that failed decides alone: 0
    even where the verifier could not judge the rest."""
    if hacked:
        return 0.0
    if terms.get("rule") is None:
        return None
    total = weight_sum = 0.0
    for name, value in terms.items():
        if value is None:
            continue
        w = weights.get(name, 0.0) * (1.0 if name == "rule" or correct else rubric_when_incorrect)
        total += w * value
        weight_sum += w
    return round(total / weight_sum, 4) if weight_sum > 0 else 0.0


def _min_bytes(verdict: dict[str, Any]) -> Optional[float]:
    """The bytes the task must move (inputs, weights, outputs once each), as the verifier's
    roofline counted them; None when it was not timed on a GPU."""
    value = ((verdict.get("timing") or {}).get("roofline") or {}).get("bytes")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def score(reference: str, candidate: str, params: dict[str, Any]) -> dict[str, Any]:
    from .nvcc_build import DEFAULT_CACHE_DIR, default_arch
    verdict = params.get("verdict") or (no_gpu_verdict(reference, candidate) if params.get("noGpu") else {})
    weights = {**DEFAULT_WEIGHTS, **{k: float(v) for k, v in (params.get("weights") or {}).items()}}
    unknown = set(weights) - set(DEFAULT_WEIGHTS)
    if unknown:
        from .errors import HarnessError
        raise HarnessError("invalid_params", f"unknown weights {sorted(unknown)}; known: {sorted(DEFAULT_WEIGHTS)}")
    cache_dir = params.get("cacheDir") or DEFAULT_CACHE_DIR
    arch = params.get("arch") or default_arch()
    files = resolve_candidate(candidate)
    failed, status = _load(verdict)

    allowed = set(params.get("allowPrecision") or [])
    ctx = StaticContext(os.path.splitext(os.path.basename(reference))[0], allowed)
    eager = params.get("precision", "eager") == "eager"
    static = [f for f in scan_candidate(files.python, files.cuda, ctx)
              if f.check in GUARD_CHECKS and not (eager and reference_runs_in_tf32(f, verdict.get("reference_precision") or {}))]
    static_json = [{"check": f.check, "message": f.message, "evidence": f.evidence, "file": f.file, "line": f.line} for f in static]

    rule = rule_reward(verdict, failed, float(params.get("fullSpeedup", FULL_SPEEDUP)))
    hacking = anti_hacking(verdict, failed, static_json)
    coverage = params.get("coverage")
    cover = operator_coverage(coverage, own_work(verdict, files))
    # Nsight Compute's metrics of the candidate's kernels: the profile given, else its folder's ncu.csv.
    profile, no_profile = find_profile(candidate, params.get("profile"))
    engineering = measure_engineering(files, cache_dir, arch, cover.get("coveredOperators"),
                                      profile, no_profile, _min_bytes(verdict))
    compliance: dict[str, Any] = {"score": None, "evidence": ["a from-scratch generation: no feedback to follow"]}
    skill = "generate"
    if params.get("previous") and params.get("feedback"):
        skill = "refine"
        before_files = resolve_candidate(params["previous"])
        before_profile, before_none = find_profile(params["previous"], None)
        before = Side(cuda_text(before_files),
                      measure_engineering(before_files, cache_dir, arch, None, before_profile, before_none,
                                          _min_bytes(params.get("previousVerdict") or {})),
                      params.get("previousVerdict"))
        after = Side(cuda_text(files), engineering, verdict)
        compliance = skill_compliance(params["feedback"], before, after)

    terms = {"rule": rule["score"], "anti_hacking": hacking["score"], "cuda_engineering": engineering.score,
             "operator_coverage": cover["score"], "skill_compliance": compliance["score"]}
    reward = combine(terms, weights, hacking["score"] == 0.0, bool(rule.get("correct")),
                     float(params.get("rubricWhenIncorrect", 0.0)))
    return {
        "schema": SCHEMA, "reference": os.path.abspath(reference), "candidate": os.path.abspath(candidate),
        "skill": skill, "verdictStatus": status, "verdictSource": params.get("verdictSource", "given"),
        "reward": reward, "weights": weights,
        "rule": rule,
        "rubric": {"anti_hacking": hacking, "cuda_engineering": engineering.to_json(),
                   "operator_coverage": cover, "skill_compliance": compliance},
        **({"needsGpu": needs_gpu(profile is not None)} if status == "needs_gpu" else {}),
    }
