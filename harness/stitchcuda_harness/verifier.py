"""verify (design §7): build → load under guard → correctness trials (candidate first, on fresh
poisoned memory, inputs cloned) → buffer-reuse, determinism, compute and stream checks → fp64
ground truth → timing against the cached baselines. Every failed check is reported by name; a
failure in one stage does not hide the checks of another, except where a later stage needs a
working candidate. Sticky CUDA errors propagate as HarnessError so the worker exits."""
from __future__ import annotations

import copy
import os
import time
from typing import Any, Optional

import torch

from . import baseline
from .candidate_files import CandidateFiles, resolve_candidate
from .environment_info import pick_device
from .errors import HarnessError, from_exception, is_sticky_cuda_error
from .kernel_trace import stream_findings, trace_kernels
from .module_loader import load_module
from .nvcc_build import Builder
from .runtime_guards import (ComputeRecorder, StateSnapshot, ThreadWatch, alias_findings, subclass_findings,
                             precision_state)
from .static_guards import StaticContext, scan_candidate
from .task_loader import Task, check_tensor_outputs, load_task
from .tensor_specs import clone_values, dtype_name
from .timer import Timer, measure_bandwidth_gbps
from .tolerance import compare
from .trial_inputs import poison_allocator, poison_tensors, redistribute
from .verdict import Finding, Verdict
from .verify_config import VerifyConfig

_bandwidth_cache: dict[str, float] = {}


class _CandidateFailed(Exception):
    """Stops the run after a finding that leaves nothing further to check (e.g. forward raised)."""


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


class Verification:
    def __init__(self, reference: str, candidate: str, config: VerifyConfig) -> None:
        self.config = config
        self.device = pick_device(config.device)
        self.verdict = Verdict(reference=os.path.abspath(reference), candidate=os.path.abspath(candidate))
        self.task: Task = load_task(reference, config.task_params)  # a broken reference is a request error
        self.files: Optional[CandidateFiles] = None
        self.snapshot: Optional[StateSnapshot] = None
        self.model: Any = None
        self.ref_model: Any = None
        self._baseline: dict[str, Any] = {}

    # helpers -----------------------------------------------------------------------------
    def _stage(self, name: str, t0: float) -> None:
        self.verdict.durations_s[name] = round(time.perf_counter() - t0, 4)

    def _guard(self, when: str) -> None:
        assert self.snapshot is not None
        self.verdict.extend(self.snapshot.check_and_restore(when, self.config.allowed_precision))

    def _candidate_error(self, check: str, exc: BaseException, what: str) -> None:
        if is_sticky_cuda_error(exc):
            raise from_exception("cuda_sticky_error", exc, self.files.files if self.files else (), what) from exc
        err = from_exception(check, exc, self.files.files if self.files else (), what)
        self.verdict.add(Finding(check, err.message, "runtime", err.file, err.line))
        raise _CandidateFailed() from exc

    def _run_candidate(self, inputs: list[Any], when: str) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """One guarded candidate call → (copies, the outputs as returned). Copies are taken on the
        current stream before any device sync, so results the candidate left unfinished on
        another stream read as wrong."""
        with ThreadWatch() as watch:
            try:
                with torch.no_grad():
                    raw = self.model(*inputs)
                outs = check_tensor_outputs(raw, self.files.python, None, "candidate")
                self.verdict.extend(subclass_findings(outs))
                copies = [torch.Tensor.clone(o.as_subclass(torch.Tensor)) for o in outs]
                _sync(self.device)
            except HarnessError as err:
                self.verdict.add(Finding("output_structure", err.message, "runtime", err.file, err.line))
                raise _CandidateFailed() from err
            except Exception as exc:
                self._candidate_error("candidate_runtime_error", exc, f"ModelNew.forward ({when})")
        self.verdict.extend(watch.findings(when))
        self._guard(when)
        return copies, outs

    # stages ------------------------------------------------------------------------------
    def run(self) -> Verdict:
        t_all = time.perf_counter()
        try:
            self._run_stages()
        except _CandidateFailed:
            pass
        finally:
            if self.snapshot is not None:
                self._guard("by the end of the run")
            self.model = None
            if self.device.type == "cuda":
                try:
                    torch.cuda.empty_cache()
                except RuntimeError:
                    pass  # after a sticky error this fails too; the error already in flight is the one to report
        self._stage("total", t_all)
        return self.verdict.finish()

    def _run_stages(self) -> None:
        cfg = self.config
        try:
            self.files = resolve_candidate(self.verdict.candidate)
        except HarnessError as err:
            self.verdict.add(Finding("candidate_load_error", err.message, "static", err.file, err.line))
            raise _CandidateFailed() from err
        t0 = time.perf_counter()
        ctx = StaticContext(os.path.splitext(os.path.basename(self.task.path))[0], set(cfg.allowed_precision))
        static = scan_candidate(self.files.python, self.files.cuda, ctx)
        self._stage("static_guards", t0)
        library = self._build()
        self.ref_model = self.task.instantiate(self.device, cfg.seed)
        self.verdict.reference_precision = self._reference_precision()
        self._add_static(static)
        if cfg.timing:
            # Baselines first, outside the candidate's guard window: torch.compile patches
            # nn.Module itself (dynamo), which the snapshot would otherwise blame on the candidate.
            self._baseline = self._fetch_baseline()
        self._load(library)
        self._trials()
        self._buffer_reuse_and_determinism()
        self._compute_and_streams()
        self._ground_truth()
        if cfg.timing and not self.verdict.failed_checks:
            self._timing()
        elif cfg.timing:
            self.verdict.skipped_checks["timing"] = "correctness or guard checks failed"

    def _build(self) -> Optional[str]:
        if not self.files or not self.files.cuda:
            return None
        t0 = time.perf_counter()
        cache = self.config.cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "stitchcuda")
        result = Builder(cache, self.config.arch).build(self.files.cuda)
        self._stage("build", t0)
        self.verdict.build = {k: v for k, v in result.to_json().items() if k != "log"}
        if not result.ok:
            errors = [d for d in result.diagnostics if d.severity == "error"] or result.diagnostics
            for d in errors[:20]:
                self.verdict.add(Finding("build_error", d.message, "build", d.file, d.line))
            raise _CandidateFailed()
        return result.library

    def _reference_precision(self) -> dict[str, Any]:
        """The reference's precision modes as it runs today (design §7): the flags, and which ops
        of the reference run through a library that honours them."""
        rec = ComputeRecorder((self.task.path,))
        inputs = self.task.inputs(self.config.seed + 99, self.device)
        with rec:
            outs = self.task.forward(self.ref_model, inputs)
        poison_tensors(outs)
        flags = precision_state()
        conv = sorted(op for op in rec.ops if "convolution" in op or "conv" in op.split("::")[-1])
        matmul = sorted(op for op in rec.ops if op.split("::")[-1] in ("mm", "addmm", "bmm", "baddbmm", "matmul", "linear"))
        tf32_ops = (conv if flags["cudnn.allow_tf32"] else []) + (matmul if flags["cuda.matmul.allow_tf32"] else [])
        on_gpu = self.device.type == "cuda"
        return {"flags": flags, "conv_ops": conv, "matmul_ops": matmul,
                "tf32_ops": tf32_ops if on_gpu else [], "device": str(self.device)}

    def _add_static(self, static: list[Finding]) -> None:
        reference_tf32 = bool(self.verdict.reference_precision.get("tf32_ops"))
        for f in static:
            if f.check == "precision_downgrade" and f.data.get("precision") == "tf32" and reference_tf32:
                continue  # the reference itself computes those ops in TF32: matching it is no downgrade
            self.verdict.add(f)

    def _load(self, library: Optional[str]) -> None:
        t0 = time.perf_counter()
        self.snapshot = StateSnapshot.take()
        assert self.files is not None
        with ThreadWatch() as watch:
            try:
                module = load_module(self.files.python, "candidate", {"__stitch_library__": library} if library else None)
            except HarnessError as err:
                if err.code == "cuda_sticky_error":
                    raise
                self.verdict.add(Finding("candidate_load_error", err.message, "runtime", err.file, err.line))
                raise _CandidateFailed() from err
            cls = getattr(module, "ModelNew", None)
            if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
                self.verdict.add(Finding("candidate_load_error", "the candidate defines no nn.Module named ModelNew", "runtime", self.files.python))
                raise _CandidateFailed()
            if issubclass(cls, self.task.model_cls) or any(b.__name__ == self.task.names.model_class for b in cls.__mro__[1:]):
                self.verdict.add(Finding("subclasses_reference", f"ModelNew's bases include the reference's {self.task.names.model_class}", "runtime"))
            init = self.task.init_inputs(self.config.seed)
            torch.manual_seed(self.config.seed)
            try:
                self.model = cls(*init).to(self.device)
            except Exception as exc:
                self._candidate_error("candidate_load_error", exc, "ModelNew.__init__")
        self.verdict.extend(watch.findings("while loading"))
        self._guard("while loading")
        self._match_weights()
        self._stage("load", t0)

    def _match_weights(self) -> None:
        """Same seed gives same weights when ModelNew creates its parameters like Model; when the
        state_dicts have the same keys and shapes, copy them anyway (design §6 allows both)."""
        ref_sd, new_sd = self.ref_model.state_dict(), self.model.state_dict()
        same = ref_sd.keys() == new_sd.keys() and all(ref_sd[k].shape == new_sd[k].shape for k in ref_sd)
        if same and ref_sd:
            self.model.load_state_dict(ref_sd)

    def _trials(self) -> None:
        t0 = time.perf_counter()
        cfg = self.config
        first_ref: list[torch.Tensor] = []
        self._trial_inputs: list[list[Any]] = []
        self._trial_refs: list[list[torch.Tensor]] = []
        self._cand_outs0: list[torch.Tensor] = []
        specs: list[tuple[list[int], torch.dtype]] = []
        ref_stats = []
        for i in range(cfg.trials + 1):
            seed = cfg.seed + i
            inputs = self.task.inputs(seed, self.device)
            distribution = "get_inputs"
            if i == cfg.trials:
                inputs, distribution = redistribute(inputs, seed)
            pristine = clone_values(inputs)
            cand_in = clone_values(inputs)
            poison_allocator(specs, self.device)
            outs, raw = self._run_candidate(cand_in, f"in trial {i}")
            self.verdict.extend(alias_findings(raw, cand_in, list(self.model.parameters())))
            del raw
            for k, (a, b) in enumerate(zip(cand_in, pristine)):
                if isinstance(a, torch.Tensor) and not torch.equal(a, b):
                    self.verdict.add(Finding("input_mutated", f"forward wrote into input {k} (trial {i})", "comparison"))
            ref_outs = self.task.forward(self.ref_model, clone_values(inputs))
            specs = [(list(t.shape), t.dtype) for t in ref_outs]
            record = self._compare(outs, ref_outs, i, seed, distribution)
            self.verdict.trials.append(record)
            if i < 2:
                self._trial_inputs.append(pristine)
                self._trial_refs.append([t.clone() for t in ref_outs])
            if i == 0:
                self._cand_outs0 = outs
                first_ref = [t.clone() for t in ref_outs]
            if distribution == "get_inputs":
                ref_stats.append(self._ref_stats(ref_outs, first_ref))
            poison_tensors(ref_outs)
        self._flag_degenerate(ref_stats)
        self._stage("correctness", t0)

    def _compare(self, outs: list[torch.Tensor], refs: list[torch.Tensor], i: int, seed: int, distribution: str) -> dict[str, Any]:
        record: dict[str, Any] = {"index": i, "seed": seed, "distribution": distribution, "passed": True, "outputs": []}
        if len(outs) != len(refs):
            self.verdict.add(Finding("output_structure", f"{len(outs)} outputs, the reference has {len(refs)}", "comparison"))
            record["passed"] = False
            return record
        for k, (a, e) in enumerate(zip(outs, refs)):
            c = compare(a, e, self.config.tolerance)
            record["outputs"].append({"max_abs_err": c.max_abs_err, "max_rel_err": c.max_rel_err,
                                      "mismatched": c.mismatched, "numel": c.numel})
            self.verdict.tolerance = {"atol": c.atol, "rtol": c.rtol, "dtype": dtype_name(e.dtype),
                                      "overrides": self.config.tolerance}
            where = f"output {k}, trial {i} ({distribution} inputs, seed {seed})"
            checks = [("shape_mismatch", not c.shape_ok, f"{where}: shape {c.actual['shape']} vs {c.expected['shape']}"),
                      ("dtype_mismatch", not c.dtype_ok, f"{where}: dtype {c.actual['dtype']} vs {c.expected['dtype']}"),
                      ("device_mismatch", not c.device_ok, f"{where}: device {c.actual['device']} vs {c.expected['device']}"),
                      ("nan_or_inf", c.nan_inf_introduced, f"{where}: NaN/Inf where the reference is finite"),
                      ("output_mismatch", c.shape_ok and not c.close,
                       f"{where}: {c.mismatched}/{c.numel} elements outside atol={c.atol} rtol={c.rtol}, max abs err {c.max_abs_err:.3g}")]
            for name, failed, message in checks:
                if failed:
                    record["passed"] = False
                    self.verdict.add(Finding(name, message, "comparison", data={"trial": i, "output": k}))
        return record

    @staticmethod
    def _ref_stats(refs: list[torch.Tensor], first: list[torch.Tensor]) -> dict[str, Any]:
        r = refs[0].detach().double()
        same_as_first = bool(first) and all(torch.equal(a, b) for a, b in zip(refs, first))
        return {"abs_max": float(r.abs().max()) if r.numel() else 0.0,
                "std": float(r.std()) if r.numel() > 1 else 0.0, "same_as_first": same_as_first}

    def _flag_degenerate(self, stats: list[dict[str, Any]]) -> None:
        atol = float(self.verdict.tolerance.get("atol", 1e-4))
        if len(stats) > 1 and all(s["same_as_first"] for s in stats[1:]):
            self.verdict.flags.append({"name": "degenerate_reference", "reason": "the reference output is identical for every seed"})
        if stats and all(s["abs_max"] <= atol for s in stats):
            self.verdict.flags.append({"name": "degenerate_reference", "reason": f"the reference output is within atol ({atol}) of zero"})
        elif stats and all(s["std"] <= atol for s in stats):
            self.verdict.flags.append({"name": "degenerate_reference", "reason": "the reference output is (near-)constant across its elements"})

    def _buffer_reuse_and_determinism(self) -> None:
        """Same buffers, new values: a candidate that caches by pointer (or by anything but the
        values) returns the old answer. Also: the same input twice must give the same answer."""
        if len(self._trial_inputs) < 2:
            return
        # Only a candidate right on trial 0 can show these faults specifically; a wrong one has
        # already failed by name and would only add noise here.
        trial0_ok = self.verdict.trials[0]["passed"]
        t0 = time.perf_counter()
        buffers = clone_values(self._trial_inputs[0])
        again, _ = self._run_candidate(buffers, "in the determinism check")
        for k, (a, b) in enumerate(zip(again, self._cand_outs0)):
            if trial0_ok and not compare(a, b, self.config.tolerance).ok:
                self.verdict.add(Finding("nondeterministic_output", f"output {k} differs between two runs on the same inputs", "comparison"))
        for dst, src in zip(buffers, self._trial_inputs[1]):
            if isinstance(dst, torch.Tensor):
                dst.copy_(src)
        reused, _ = self._run_candidate(buffers, "in the buffer-reuse check")
        for k, (a, e) in enumerate(zip(reused, self._trial_refs[1])):
            if trial0_ok and not compare(a, e, self.config.tolerance).ok:
                stale = compare(a, self._trial_refs[0][k], self.config.tolerance).ok
                self.verdict.add(Finding("output_cached", f"output {k}: new values in the same input buffers "
                                         + ("returned the previous inputs' result" if stale else "gave a wrong result"), "comparison"))
        self._stage("buffer_reuse", t0)

    def _compute_and_streams(self) -> None:
        t0 = time.perf_counter()
        assert self.files is not None
        inputs = clone_values(self._trial_inputs[0])
        recorder = ComputeRecorder(self.files.files)
        try:
            with recorder, torch.no_grad():
                self.model(*inputs)
            _sync(self.device)
        except Exception as exc:
            self._candidate_error("candidate_runtime_error", exc, "ModelNew.forward (compute check)")
        self._guard("in the compute check")
        self.verdict.extend(recorder.findings(self.files.python))
        if self.device.type == "cuda" and self.config.kernel_trace:
            def call() -> None:
                with torch.no_grad():
                    self.model(*inputs)
            trace = trace_kernels(call, self.device)
            self._guard("in the kernel trace")
            if trace.error:
                self.verdict.skipped_checks["side_stream(profiler)"] = trace.error
            else:
                self.verdict.kernels = trace.kernels
                self.verdict.extend(stream_findings(trace))
        elif self.device.type != "cuda":
            self.verdict.skipped_checks["side_stream(profiler)"] = "no CUDA device"
        self._stage("compute_and_streams", t0)

    def _ground_truth(self) -> None:
        """Both sides' error against fp64 (design §7), so the user sees which is closer to truth."""
        t0 = time.perf_counter()
        inputs = self._trial_inputs[0]
        if not any(isinstance(v, torch.Tensor) and v.is_floating_point() and v.dtype != torch.float64 for v in inputs):
            return
        try:
            model64 = copy.deepcopy(self.ref_model).double()
            x64 = [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs]
            with torch.no_grad():
                truth = check_tensor_outputs(model64(*x64), self.task.path, None, "task")
        except Exception as exc:
            if is_sticky_cuda_error(exc):
                raise
            self.verdict.ground_truth = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            return
        def err(outs: list[torch.Tensor]) -> list[float]:
            # Both sides in float64: a bool or integer output (any, argmax) has a truth of its own dtype.
            return [float((o.double() - t.double()).abs().max()) if o.shape == t.shape else float("inf")
                    for o, t in zip(outs, truth)]
        self.verdict.ground_truth = {"reference_max_abs_err": err(self._trial_refs[0]),
                                     "candidate_max_abs_err": err(self._cand_outs0), "trial": 0}
        self._stage("ground_truth", t0)

    def _timing(self) -> None:
        t0 = time.perf_counter()
        cfg = self.config
        timer = Timer(self.device, cfg.timer)
        sets = baseline.input_sets(self.task, self.device, cfg.seed, cfg.input_sets)
        try:
            # Eager beside the candidate, round by round: the ratio then compares work, not the
            # drift of the GPU and host between this measurement and the cached baseline.
            stats = timer.measure_side_by_side({"eager": self.ref_model, "candidate": self.model}, sets)
        except Exception as exc:
            self._candidate_error("candidate_runtime_error", exc, "ModelNew.forward (timing)")
        self._guard("during timing")
        cand, eager = stats["candidate"], stats["eager"]
        base = self._baseline
        timing: dict[str, Any] = {"candidate": cand.to_json(), "eager": eager.to_json(), "compile": base.get("compile"),
                                  "baseline_eager": base["eager"], "baseline_cached": base.get("cached", False)}
        timing["speedup_vs_eager"] = eager.median_ms / cand.median_ms if cand.median_ms > 0 else None
        # torch.compile was timed beside eager in the baseline; its ratio to eager there, times
        # the candidate's ratio to eager here.
        comp = base.get("compile") or {}
        compile_speedup = base["eager"]["median_ms"] / comp["median_ms"] if comp.get("median_ms") else None
        timing["speedup_vs_compile"] = (timing["speedup_vs_eager"] / compile_speedup
                                        if compile_speedup and timing["speedup_vs_eager"] else None)
        timing["roofline"] = self._roofline(sets[0], cand.median_ms)
        self.verdict.timing = timing
        self._stage("timing", t0)

    def _fetch_baseline(self) -> dict[str, Any]:
        cfg = self.config
        t0 = time.perf_counter()
        base = baseline.run_baseline(self.task, self.device, {
            "cacheDir": cfg.cache_dir, "seed": cfg.seed, "inputSets": cfg.input_sets,
            "compile": cfg.compile_baseline, "timer": {"warmup": cfg.timer.warmup, "iterations": cfg.timer.iterations,
                                                       "maxSeconds": cfg.timer.max_seconds}})
        self._stage("baseline", t0)
        return base

    def _roofline(self, inputs: list[Any], median_ms: float) -> dict[str, Any]:
        """Bytes that must move (inputs, weights, outputs once each) over the measured copy
        bandwidth: a floor no correct candidate can beat by much, since L2 is flushed."""
        if self.device.type != "cuda":
            return {"skipped": "no CUDA device"}
        key = str(self.device)
        if key not in _bandwidth_cache:
            _bandwidth_cache[key] = measure_bandwidth_gbps(self.device)
        gbps = _bandwidth_cache[key]
        nbytes = sum(v.numel() * v.element_size() for v in inputs if isinstance(v, torch.Tensor))
        nbytes += sum(p.numel() * p.element_size() for p in self.ref_model.parameters())
        nbytes += sum(t.numel() * t.element_size() for t in self._trial_refs[0])
        floor_ms = nbytes / (gbps * 1e9) * 1e3 if gbps > 0 else 0.0
        if floor_ms > 0 and median_ms < self.config.roofline_margin * floor_ms:
            self.verdict.add(Finding("faster_than_roofline", f"median {median_ms:.4f} ms is under {self.config.roofline_margin:.0%} of the "
                                     f"memory floor {floor_ms:.4f} ms ({nbytes} bytes at {gbps:.0f} GB/s)", "runtime"))
        return {"bytes": nbytes, "bandwidth_gbps": gbps, "floor_ms": floor_ms}


def verify(reference: str, candidate: str, config: VerifyConfig) -> Verdict:
    return Verification(reference, candidate, config).run()
