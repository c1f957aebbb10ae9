"""`verify --kernelbench`: KernelBench's own correctness protocol (its eval_kernel_against_ref, as
../shared/kernelbench/README.md gives it), so a candidate or its export is judged the way
KernelBench will judge it: both models built right after the same seed and nothing copied, 5
trials each `set_seed(trial_seed); inputs = get_inputs()`, the reference first and then ModelNew
on the same inputs, torch.allclose against eager at atol = rtol = 1e-4 and, for the looser count,
at 1e-2. It counts; it does not guard: the verdict with every check is `verify`'s."""
from __future__ import annotations

import os
from typing import Any, Optional

import torch

from .candidate_files import resolve_candidate
from .environment_info import pick_device
from .errors import HarnessError, from_exception, is_no_gpu_error, is_sticky_cuda_error
from .model_state import construction_difference
from .module_loader import load_module
from .nvcc_build import DEFAULT_CACHE_DIR, Builder
from .task_loader import check_tensor_outputs, load_task
from .tensor_specs import to_device
from .tolerance import compare

TOLERANCES = (1e-4, 1e-2)
SEED = 42  # KernelBench's seed_num
TRIALS = 5


def _set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _key(tol: float) -> str:
    return f"correct_{tol:.0e}".replace("e-0", "e-")  # correct_1e-4, correct_1e-2


class _Stop(Exception):
    """KernelBench stops at the first error or shape mismatch; so does this count."""


def kernelbench_check(reference: str, candidate: str, params: dict[str, Any]) -> dict[str, Any]:
    device = pick_device(params.get("device"))
    seed = int(params.get("seed", SEED))
    trials = int(params.get("trials", TRIALS))
    result: dict[str, Any] = {"protocol": "kernelbench", "reference": os.path.abspath(reference),
                              "candidate": os.path.abspath(candidate), "device": str(device), "seed": seed,
                              "trials": trials, "status": "failed", **{_key(t): 0 for t in TOLERANCES},
                              "weights": None, "per_trial": [], "error": None}
    task = load_task(reference, {k: params[k] for k in ("modelClass", "inputsFn", "initInputsFn") if params.get(k)})
    files = resolve_candidate(candidate)

    def stop(stage: str, exc: Optional[BaseException] = None, message: str = "") -> _Stop:
        if exc is not None:
            if is_sticky_cuda_error(exc):
                raise from_exception("cuda_sticky_error", exc, files.files, stage) from exc
            if device.type != "cuda" and is_no_gpu_error(exc, stage == "load" and files.builds_cuda_on_import()):
                result["status"] = "needs_gpu"
            message = exc.message if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
        result["error"] = {"stage": stage, "message": message[:500]}
        return _Stop()

    try:
        library = None
        if files.cuda:
            cache = params.get("cacheDir") or DEFAULT_CACHE_DIR
            build = Builder(cache, params.get("arch")).build(files.cuda)
            if not build.ok:
                first = build.first_error()
                raise stop("build", message=f"{first.file}:{first.line}: {first.message}" if first else "nvcc failed")
            library = build.library
        try:
            module = load_module(files.python, "candidate", {"__stitch_library__": library} if library else None)
            new_cls = getattr(module, "ModelNew")
        except Exception as exc:
            raise stop("load", exc) from exc
        _set_seed(seed)
        init = [to_device(v, device) for v in task.get_init_inputs()]
        with torch.no_grad():
            _set_seed(seed)
            try:
                model = task.model_cls(*init)
            except Exception as exc:
                raise from_exception("task_init_error", exc, (task.path,), f"{task.names.model_class}.__init__") from exc
            try:
                _set_seed(seed)
                model_new = new_cls(*init)
                model, model_new = model.to(device), model_new.to(device)
                _sync(device)
            except Exception as exc:
                raise stop("init", exc) from exc
        result["weights"] = construction_difference(model, model_new) or "same"
        torch.manual_seed(seed)
        trial_seeds = [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(trials)]
        with torch.no_grad():
            for trial_seed in trial_seeds:
                _set_seed(trial_seed)
                inputs = [to_device(v, device) for v in task.get_inputs()]
                expected = task.forward(model, inputs)
                _sync(device)
                try:
                    actual = check_tensor_outputs(model_new(*inputs), files.python, None, "candidate")
                    _sync(device)
                except Exception as exc:
                    raise stop("forward", exc) from exc
                record: dict[str, Any] = {"seed": trial_seed}
                result["per_trial"].append(record)
                if len(actual) != len(expected) or any(a.shape != e.shape for a, e in zip(actual, expected)):
                    raise stop("compare", message=f"output shape mismatch: expected {[list(e.shape) for e in expected]}, "
                                                  f"got {[list(a.shape) for a in actual]}")
                comparisons = {t: [compare(a, e, {"atol": t, "rtol": t}, equal_nan=False) for a, e in zip(actual, expected)]
                               for t in TOLERANCES}
                record["max_abs_err"] = max(c.max_abs_err for c in comparisons[TOLERANCES[0]])
                for t, cs in comparisons.items():
                    close = all(c.close and c.dtype_ok for c in cs)
                    record[_key(t)] = close
                    result[_key(t)] += int(close)
                del inputs, expected, actual
    except _Stop:
        pass
    if result["error"] is None and result[_key(TOLERANCES[0])] == trials:
        result["status"] = "passed"
    return result


def describe(result: dict[str, Any]) -> str:
    """The human line of the count."""
    if result["status"] == "needs_gpu":
        return f"NEEDS A GPU: {result['candidate']}: {result['error']['message']}"
    counts = ", ".join(f"{result[_key(t)]}/{result['trials']} at atol=rtol={_key(t)[8:]}" for t in TOLERANCES)
    lines = [f"{'PASSED' if result['status'] == 'passed' else 'FAILED'} (KernelBench protocol, seed {result['seed']}): "
             f"{counts}: {result['candidate']}",
             f"  weights under one seed: {result['weights'] or 'not compared'}"]
    if result["error"]:
        lines.append(f"  stopped at {result['error']['stage']}: {result['error']['message']}")
    return "\n".join(lines)
