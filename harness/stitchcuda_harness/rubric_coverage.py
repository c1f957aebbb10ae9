"""Operator coverage (protocol/SCORE.md) counts the operators whose work ran in the candidate's own
code, never what the reference's graph holds: a candidate whose kernels did not run — or that has
none (plain PyTorch) — covers nothing, whatever the plan or the graph say. Which of its code ran is
read from the verifier's kernel trace on a GPU; without one, from its source: its CUDA kernels and
library calls."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .candidate_files import CandidateFiles
from .kernel_trace import _kernel_identifier, own_kernel_names
from .rubric_engineering import _KERNEL, _LIBRARY, cuda_text
from .rubric_metrics import _PYTORCH


@dataclass
class OwnWork:
    ran: bool       # any of the forward's work ran in the candidate's own kernels or library calls
    source: str     # "kernel trace" | "source"
    evidence: str


def own_work(verdict: dict[str, Any], files: CandidateFiles) -> OwnWork:
    """From the verdict's kernel trace (the kernels one forward launched, on a GPU) where it has one,
    else from the candidate's CUDA source."""
    source = cuda_text(files)
    library = bool(_LIBRARY.search(source))
    traced = [k.get("name", "") for k in verdict.get("kernels") or [] if isinstance(k, dict)]
    if traced:
        own = own_kernel_names(files.files)
        mine = [n for n in traced if _kernel_identifier(n) in own or (library and not _PYTORCH.search(n))]
        names = ", ".join(sorted({_kernel_identifier(n) for n in (mine or traced)})[:8])
        if mine:
            return OwnWork(True, "kernel trace", f"kernel trace: {len(mine)} of the {len(traced)} launches are the "
                                                 f"candidate's own ({names})")
        return OwnWork(False, "kernel trace", f"kernel trace: none of the {len(traced)} launches is the candidate's "
                                              f"own ({names}): its forward's work ran in PyTorch")
    kernels = len(_KERNEL.findall(source))
    if kernels or library:
        return OwnWork(True, "source", f"source: {kernels} kernel(s) and {len(_LIBRARY.findall(source))} library "
                                       "call(s) of its own (which of them run needs a GPU's kernel trace)")
    return OwnWork(False, "source", "source: no CUDA kernel or library call of its own: its forward's work is PyTorch's")


def operator_coverage(coverage: Optional[dict[str, Any]], own: OwnWork) -> dict[str, Any]:
    """The mean of the share of operators and the share of reference time covered (PlanCoverage, with
    the operators the candidate left in PyTorch uncovered) — the first so that many cheap operators
    left in PyTorch count, the second so that one expensive one does — and 0 where none of the
    candidate's own code did any work."""
    if not own.ran:
        operators = (coverage or {}).get("operators")
        return {"score": 0.0, "operators": operators, "coveredOperators": 0, "timeShare": 0.0,
                "timeBasis": (coverage or {}).get("timeBasis"), "evidenceSource": own.source,
                "evidence": [(f"0/{operators} operators: " if operators else "") + own.evidence]}
    if not coverage or not coverage.get("operators"):
        return {"score": None, "evidenceSource": own.source, "evidence": ["no plan accounting given", own.evidence]}
    ops = coverage["coveredOperators"] / coverage["operators"]
    share = coverage.get("timeShare")
    score = ops if share is None else 0.5 * ops + 0.5 * float(share)
    return {"score": round(score, 4), **{k: coverage.get(k) for k in ("operators", "coveredOperators", "timeShare", "timeBasis")},
            "evidenceSource": own.source,
            "evidence": [f"{coverage['coveredOperators']}/{coverage['operators']} operators"
                         + (f", {float(share):.1%} of the reference's time ({coverage.get('timeBasis')})" if share is not None else ""),
                         own.evidence]}
