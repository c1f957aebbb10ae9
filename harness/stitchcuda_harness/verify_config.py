"""Parameters of one verify, typed at the edge (from the protocol's params or the CLI flags)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .timer import TimerConfig


@dataclass
class VerifyConfig:
    trials: int = 5                    # seeded get_inputs() trials; one differently distributed trial is added
    seed: int = 0
    tolerance: dict[str, Any] = field(default_factory=dict)   # {"atol","rtol"} and/or {"float16": {...}}
    allowed_precision: set[str] = field(default_factory=set)  # opt-ins: "tf32", "fp16", "bf16"
    precision: str = "eager"           # "eager": TF32 the reference itself runs is no downgrade; "fp32": it is
    timing: bool = True
    compile_baseline: bool = True
    input_sets: int = 4
    timer: TimerConfig = field(default_factory=TimerConfig)
    kernel_trace: bool = True
    cache_dir: Optional[str] = None
    arch: Optional[str] = None
    device: Optional[str] = None
    task_params: dict[str, Any] = field(default_factory=dict)  # modelClass / inputsFn / initInputsFn
    roofline_margin: float = 0.7       # flag candidates faster than this fraction of the memory floor
    memory_budget: Optional[int] = None  # bytes the verifier may plan with instead of the device's free memory

    @staticmethod
    def from_params(p: dict[str, Any]) -> "VerifyConfig":
        c = VerifyConfig()
        c.trials = max(1, int(p.get("trials", c.trials)))
        c.seed = int(p.get("seed", c.seed))
        c.tolerance = dict(p.get("tolerance", {}))
        for key in ("atol", "rtol"):
            if key in p:
                c.tolerance[key] = float(p[key])
        c.allowed_precision = set(p.get("allowPrecision", []))
        c.precision = "fp32" if p.get("precision") == "fp32" else "eager"
        c.timing = bool(p.get("timing", True))
        c.compile_baseline = bool(p.get("compileBaseline", True))
        c.input_sets = max(1, int(p.get("inputSets", c.input_sets)))
        c.timer = TimerConfig.from_params(p.get("timer", {}))
        c.kernel_trace = bool(p.get("kernelTrace", True))
        c.cache_dir = p.get("cacheDir")
        c.arch = p.get("arch")
        c.device = p.get("device")
        c.task_params = {k: p[k] for k in ("modelClass", "inputsFn", "initInputsFn") if p.get(k)}
        c.roofline_margin = float(p.get("rooflineMargin", c.roofline_margin))
        c.memory_budget = int(p["memoryBudget"]) if p.get("memoryBudget") is not None else None
        return c
