"""The rubric's skill-compliance dimension (protocol/SCORE.md): did a refinement do what the
Verifier's feedback (protocol/FEEDBACK.md, one diagnosis and one suggested change) asked — was
that change made, and did the number it targets move."""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from .rubric_engineering import Engineering

# A refinement counts as faster when its median is at least this much below the previous one:
# the timer's spread over L2-flushed iterations is about 1-2% (protocol/HARNESS.md, Timing).
FASTER_BY = 0.02

_LAUNCH = re.compile(r"<<<[^>]*>>>")
# A launch configuration: the launches and the grid/block shapes they are given.
_CONFIG = re.compile(r"<<<[^>]*>>>|\bdim3\s+\w+\s*[({][^;]*|\b(?:threads|blocks|block|grid)\w*\s*=\s*[^;]+")


class Side:
    """One candidate as compliance compares it: its CUDA text, engineering and verdict."""

    def __init__(self, text: str, engineering: Engineering, verdict: Optional[dict[str, Any]]) -> None:
        self.text, self.engineering, self.verdict = text, engineering, verdict or {}

    def has(self, feature: str) -> bool:
        return bool(self.engineering.features.get(feature, {}).get("present"))

    def steps(self) -> int:
        return self.engineering.kernels + self.engineering.library_calls + len(_LAUNCH.findall(self.text))

    def median_ms(self) -> Optional[float]:
        timing = self.verdict.get("timing") or {}
        value = (timing.get("candidate") or {}).get("median_ms")
        return float(value) if isinstance(value, (int, float)) else None


def _gained(feature: str) -> Callable[[Side, Side], Optional[str]]:
    return lambda before, after: f"{feature} added" if after.has(feature) and not before.has(feature) else None


def _fewer_steps(before: Side, after: Side) -> Optional[str]:
    if after.steps() < before.steps():
        return f"fewer kernels and launches ({before.steps()} → {after.steps()})"
    if after.has("fusion") and not before.has("fusion"):
        return "fusion added"
    return None


def _graph_or_fewer(before: Side, after: Side) -> Optional[str]:
    if "cudaGraphLaunch" in after.text and "cudaGraphLaunch" not in before.text:
        return "CUDA graph replay added"
    return _fewer_steps(before, after)


def _launch_changed(before: Side, after: Side) -> Optional[str]:
    if _CONFIG.findall(before.text) != _CONFIG.findall(after.text):
        return "launch configuration changed"
    if after.text.count("__launch_bounds__") > before.text.count("__launch_bounds__"):
        return "__launch_bounds__ added"
    return None


def _more_in_flight(before: Side, after: Side) -> Optional[str]:
    # Wider or asynchronous loads, data staged once in shared memory instead of read again, or
    # more threads and blocks: FEEDBACK.md's remedies for waiting on memory.
    return (_gained("vectorized_access")(before, after) or _gained("async_copy")(before, after)
            or _gained("tiling")(before, after) or _launch_changed(before, after))


# What each optimize-mode category (FEEDBACK.md) asks for, as a test on (before, after).
_ASKED: dict[str, Callable[[Side, Side], Optional[str]]] = {
    "launch_overhead": _graph_or_fewer,
    "memory_floor_reached": _fewer_steps,
    "memory_bound_at_ceiling": _fewer_steps,
    "compute_bound_at_ceiling": _gained("tensor_cores"),
    "occupancy_limited": _launch_changed,
    "grid_too_small": _launch_changed,
    "below_memory_floor": _more_in_flight,
}


def _asked_for(category: str) -> Optional[Callable[[Side, Side], Optional[str]]]:
    if category in _ASKED:
        return _ASKED[category]
    if category.startswith("stall_") or category.endswith("_bound_below_ceiling"):
        return _more_in_flight
    return None  # no_throughput_metrics asks to re-profile: no code change to look for


def skill_compliance(feedback: dict[str, Any], before: Side, after: Side) -> dict[str, Any]:
    """{score (None when the feedback asked for no code change), mode, category, changeMade,
    metricMoved, evidence}."""
    mode, category = feedback.get("mode", ""), feedback.get("category", "")
    out: dict[str, Any] = {"mode": mode, "category": category, "evidence": []}
    if before.text == after.text:
        out.update(score=0.0, changeMade=False, metricMoved=False)
        out["evidence"].append("the refinement's CUDA is the previous candidate's, unchanged")
        return out
    if mode == "fix":
        # The change asked for is whatever clears the check; the number is the check itself.
        failed = set(after.verdict.get("failed_checks") or [])
        judged = after.verdict.get("status") in ("passed", "failed")
        cleared = judged and category not in failed
        out.update(changeMade=True, metricMoved=cleared,
                   score=1.0 if cleared else 0.5)
        out["evidence"].append(f"{category} {'no longer fails' if cleared else 'still fails' if judged else 'not judged'}")
        return out
    test = _asked_for(category)
    if test is None:
        out.update(score=None, changeMade=None, metricMoved=None)
        out["evidence"].append(f"'{category}' asks for no code change")
        return out
    made = test(before, after)
    out["changeMade"] = made is not None
    out["evidence"].append(made or f"the change '{category}' asks for is not in the refinement")
    was, now = before.median_ms(), after.median_ms()
    if was is None or now is None:
        out["metricMoved"] = None
        out["evidence"].append("no timing for both candidates: only the change is judged")
        out["score"] = 1.0 if made else 0.0
        return out
    moved = now < was * (1 - FASTER_BY)
    out["metricMoved"] = moved
    out["evidence"].append(f"median {was:.4g} ms → {now:.4g} ms")
    out["score"] = 0.5 * bool(made) + 0.5 * moved
    return out
