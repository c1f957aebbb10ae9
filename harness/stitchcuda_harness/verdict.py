"""The verify result: every check by name with its status and evidence, so a failure always says
which guard tripped, where (file:line when known) and why. Check names are listed in
protocol/HARNESS.md and are stable: the host and the adversarial manifest key on them."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

CHECK_NAMES = (
    "build_error", "candidate_load_error", "candidate_runtime_error", "output_structure",
    "shape_mismatch", "dtype_mismatch", "device_mismatch", "output_mismatch", "nan_or_inf",
    "tensor_subclass_output", "output_aliases_input", "output_cached", "constant_output", "input_mutated",
    "nondeterministic_output", "pytorch_compute", "try_except_fallback", "subclasses_reference",
    "reference_access", "dynamic_code", "judge_introspection", "patched_timer", "patched_torch_function", "patched_harness",
    "extra_thread", "side_stream", "precision_downgrade", "faster_than_roofline", "weights_differ", "buffer_mismatch",
)
# Not the candidate's: the verifier could not judge it (its own error, or no GPU here). They fail the
# verdict, set its status, and must never become advice to change the candidate.
VERIFIER_CHECKS = ("verifier_error", "needs_gpu")


@dataclass
class Finding:
    check: str
    message: str
    evidence: str  # static | runtime | profiler | comparison | build | verifier
    file: Optional[str] = None
    line: Optional[int] = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    passed: bool = False
    status: str = "failed"  # passed | failed | verifier_error | needs_gpu
    failed_checks: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped_checks: dict[str, str] = field(default_factory=dict)  # name -> why it could not run
    flags: list[dict[str, Any]] = field(default_factory=list)     # facts about the task, not the candidate
    trials: list[dict[str, Any]] = field(default_factory=list)
    tolerance: dict[str, Any] = field(default_factory=dict)
    reference_precision: dict[str, Any] = field(default_factory=dict)
    ground_truth: dict[str, Any] = field(default_factory=dict)
    correctness_rule: Optional[str] = None       # "reference" | "truth": the rule every trial passed by
    kernelbench_strict: Optional[bool] = None    # allclose(atol=rtol=1e-4) against eager on every get_inputs trial
    memory: dict[str, Any] = field(default_factory=dict)
    peak_memory_bytes: dict[str, int] = field(default_factory=dict)
    kernels: list[dict[str, Any]] = field(default_factory=list)
    pytorch_ops: dict[str, int] = field(default_factory=dict)  # declared left in PyTorch (a partial candidate)
    build: Optional[dict[str, Any]] = None
    timing: Optional[dict[str, Any]] = None
    durations_s: dict[str, float] = field(default_factory=dict)
    reference: str = ""
    candidate: str = ""

    def add(self, finding: Finding) -> None:
        key = (finding.check, finding.message, finding.file, finding.line)
        if any((f.check, f.message, f.file, f.line) == key for f in self.findings):
            return  # the same patch or subclass seen again in a later call says nothing new
        self.findings.append(finding)
        if finding.check not in self.failed_checks:
            self.failed_checks.append(finding.check)

    def extend(self, findings: list[Finding]) -> None:
        for f in findings:
            self.add(f)

    def finish(self) -> "Verdict":
        self.passed = not self.failed_checks
        verifier = [c for c in VERIFIER_CHECKS if c in self.failed_checks]
        self.status = "passed" if self.passed else verifier[-1] if verifier else "failed"
        return self

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
