"""verify (design §7): build → load under guard → correctness trials (candidate first, on fresh
poisoned memory, inputs cloned; the fp64 truth where the plain comparison fails) → buffers after
the trials → buffer-reuse, determinism, compute and stream checks → timing against the cached
baselines. Every failed check is reported by name; a failure in one stage does not hide the checks
of another, except where a later stage needs a working candidate. The verifier sizes itself to the
device's free memory: one trial's tensors alive at a time, what later checks need kept on the CPU
when it is large, comparisons in slices. Its own failures (out of memory, a harness bug) are
`verifier_error`, never a check of the candidate. Sticky CUDA errors propagate as HarnessError so
the worker exits. While it runs, `report` hears whose code runs now (the candidate's, or only the
verifier's: the reference, the fp64 truth, comparisons), so that a host whose deadline kills the worker
can tell the verifier's own slow work from a candidate that hangs."""
from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from typing import Any, Callable, Iterator, Optional

# report(stage, running): running is "candidate" while the candidate's code runs, else "verifier".
StageReport = Callable[[str, str], None]

import torch

from . import baseline, op_registry
from .bandwidth import measure_bandwidth_gbps, start_probe_build
from .candidate_files import CandidateFiles, resolve_candidate
from .environment_info import pick_device
from .errors import (OUT_OF_MEMORY_CODES, HarnessError, from_exception, is_no_gpu_error, is_out_of_memory,
                     is_sticky_cuda_error)
from .ground_truth import GroundTruth, Truth, to_float64
from .kernel_trace import own_kernel_names, stream_findings, trace_kernels, warm_profiler
from .model_state import buffer_differences, construction_difference
from .module_loader import load_module
from .nvcc_build import DEFAULT_CACHE_DIR, Builder
from .runtime_guards import (ComputeRecorder, StateSnapshot, ThreadWatch, alias_findings, subclass_findings,
                             precision_state)
from .static_guards import StaticContext, reference_runs_in_tf32, scan_candidate
from .task_loader import Task, check_tensor_outputs, load_task
from .tensor_specs import clone_values, dtype_name
from .timed_calls import TimedCalls
from .timer import Timer
from .tolerance import compare, compare_with_truth, summary, tensors_equal, tolerance_for
from .trial_inputs import poison_allocator, poison_tensors, redistribute
from .verdict import Finding, Verdict
from .verify_config import VerifyConfig

_bandwidth_cache: dict[str, float] = {}


def same_every_seed(stats: list[list[dict[str, Any]]]) -> bool:
    """Whether trials' output summaries (tolerance.summary) are identical from seed to seed."""
    return len(stats) > 1 and all([o["fingerprint"] for o in s] == [o["fingerprint"] for o in stats[0]] for s in stats[1:])


class _CandidateFailed(Exception):
    """Stops the run after a finding that leaves nothing further to check (e.g. forward raised)."""


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _nbytes(values: Any) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


class Verification:
    def __init__(self, reference: str, candidate: str, config: VerifyConfig, report: Optional[StageReport] = None) -> None:
        self.config = config
        self._report = report
        self._running = "verifier"    # whose code runs now
        self._reported: tuple[str, str] = ("", "")
        self.device = pick_device(config.device)
        self.verdict = Verdict(reference=os.path.abspath(reference), candidate=os.path.abspath(candidate))
        self.task: Task = load_task(reference, config.task_params)  # a broken reference is a request error
        self.files: Optional[CandidateFiles] = None
        self.declared_ops: dict[str, int] = {}
        self.any_rows = False  # STITCH_ANY_ROWS: the program takes the rows (dim 0) of each call
        self.snapshot: Optional[StateSnapshot] = None
        self.model: Any = None
        self.ref_model: Any = None
        self._baseline: dict[str, Any] = {}
        self._current = "start"       # the stage running, named in a verifier_error
        self._sizes = (0, 0)          # bytes of one trial's inputs and of its outputs
        self._on_device = True        # whether the candidate's kept outputs stay on the device (else the CPU)
        self._small = True            # trials small against free memory: the reference gets a clone, truth on trial 0
        self._cand_outs: list[list[torch.Tensor]] = []  # the candidate's outputs of trials 0 and 1
        self._out_specs: list[tuple[list[int], torch.dtype]] = []  # the reference's outputs: shapes and dtypes
        self._truth: Optional[GroundTruth] = None

    # helpers -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        self._current = name
        self._announce()
        t0 = time.perf_counter()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        try:
            yield
        finally:
            self.verdict.durations_s[name] = round(self.verdict.durations_s.get(name, 0.0) + time.perf_counter() - t0, 4)
            if self.device.type == "cuda":
                with contextlib.suppress(RuntimeError):
                    self.verdict.peak_memory_bytes[name] = torch.cuda.max_memory_allocated(self.device)

    @contextlib.contextmanager
    def _candidate_runs(self) -> Iterator[None]:
        """The candidate's code runs inside (its build, import, forward, timing); the verifier's own
        work is everything else."""
        before = self._running
        self._running = "candidate"
        self._announce()
        try:
            yield
        finally:
            self._running = before
            self._announce()

    def _announce(self) -> None:
        now = (self._current, self._running)
        if self._report is not None and now != self._reported:
            self._reported = now
            self._report(*now)

    def _free_bytes(self) -> int:
        """What the verifier may still allocate: the device's free memory plus the blocks PyTorch's
        caching allocator holds unused (or the job's memoryBudget, for tests and what-ifs)."""
        if self.config.memory_budget is not None:
            return self.config.memory_budget
        if self.device.type == "cuda":
            free, _total = torch.cuda.mem_get_info(self.device)
            return free + torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")

    def _keep(self, values: list[Any]) -> list[Any]:
        """A private copy of a trial's tensors for a later check: on the device while they fit beside a
        trial, else on the CPU (copied back slice by slice when compared; a pageable copy of 6.4 GB took
        5.7 s on an H100, bench/verify_costs.py)."""
        where = self.device if self._on_device else torch.device("cpu")
        return [v.to(where, copy=True) if isinstance(v, torch.Tensor) else v for v in values]

    def _guard(self, when: str) -> None:
        assert self.snapshot is not None
        self.verdict.extend(self.snapshot.check_and_restore(when, self.config.allowed_precision))

    def _needs_gpu(self, exc: BaseException, importing: bool = False) -> bool:
        """A CUDA candidate run where no GPU is visible: say so, instead of failing the candidate."""
        if self.device.type == "cuda" or not is_no_gpu_error(exc, importing and self.files is not None
                                                             and self.files.builds_cuda_on_import()):
            return False
        self.verdict.add(Finding("needs_gpu", f"no GPU is visible to the verifier, and the candidate needs one "
                                 f"({type(exc).__name__}: {str(exc)[:200]}); verify it on a machine with a GPU", "verifier"))
        return True

    def _candidate_error(self, check: str, exc: BaseException, what: str) -> None:
        if is_sticky_cuda_error(exc):
            raise from_exception("cuda_sticky_error", exc, self.files.files if self.files else (), what) from exc
        if self._needs_gpu(exc):
            raise _CandidateFailed() from exc
        err = from_exception(check, exc, self.files.files if self.files else (), what)
        message = err.message
        if is_out_of_memory(exc) and self.device.type == "cuda":
            message += f" (the verifier itself held {torch.cuda.memory_allocated(self.device) / 2**30:.1f} GiB then)"
        self.verdict.add(Finding(check, message, "runtime", err.file, err.line))
        raise _CandidateFailed() from exc

    def _verifier_error(self, exc: BaseException) -> None:
        """The verifier's own failure: reported as such (stage named), never as the candidate's."""
        traceback.print_exc(file=sys.stderr)
        text = exc.message if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
        self.verdict.add(Finding("verifier_error", f"the verifier failed in its {self._current} stage, not the candidate: "
                                 + text[:500], "verifier", data={"stage": self._current,
                                                                 "out_of_memory": is_out_of_memory(exc)}))

    def _run_candidate(self, inputs: list[Any], when: str) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """One guarded candidate call → (copies, the outputs as returned). Copies are taken on the
        current stream before any device sync, so results the candidate left unfinished on
        another stream read as wrong."""
        with self._candidate_runs(), ThreadWatch() as watch:
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
        except HarnessError as err:
            if err.code not in OUT_OF_MEMORY_CODES:
                raise  # a sticky error, or the reference broken: the request's error, as before
            self._verifier_error(err)  # the reference's own run did not fit beside the verifier's tensors
        except Exception as exc:
            if is_sticky_cuda_error(exc):
                raise from_exception("cuda_sticky_error", exc, self.files.files if self.files else (), self._current) from exc
            self._verifier_error(exc)
        finally:
            if self.snapshot is not None:
                self._guard("by the end of the run")
            self.model = None
            self._release_trials()
            if self.device.type == "cuda":
                try:
                    torch.cuda.empty_cache()
                except RuntimeError:
                    pass  # after a sticky error this fails too; the error already in flight is the one to report
        self.verdict.durations_s["total"] = round(time.perf_counter() - t_all, 4)
        return self.verdict.finish()

    def _release_trials(self) -> None:
        self._cand_outs = []
        if self._truth is not None:
            self._truth.release()

    def _run_stages(self) -> None:
        cfg = self.config
        try:
            self.files = resolve_candidate(self.verdict.candidate)
        except HarnessError as err:
            self.verdict.add(Finding("candidate_load_error", err.message, "static", err.file, err.line))
            raise _CandidateFailed() from err
        with self._stage("static_guards"):
            ctx = StaticContext(os.path.splitext(os.path.basename(self.task.path))[0], set(cfg.allowed_precision))
            static = scan_candidate(self.files.python, self.files.cuda, ctx)
        if cfg.timing and self.device.type == "cuda" and str(self.device) not in _bandwidth_cache:
            start_probe_build(self._cache_dir())  # the roofline's stream probe, built beside the candidate
        library = self._build()
        self._current = "reference"
        self._announce()
        self.ref_model = self.task.instantiate(self.device, cfg.seed)
        self._truth = GroundTruth(self.ref_model, self.task.path, self._free_bytes)
        self.verdict.reference_precision = self._reference_precision()
        self._add_static(static)
        if cfg.timing:
            # Baselines first, outside the candidate's guard window: torch.compile patches
            # nn.Module itself (dynamo), which the snapshot would otherwise blame on the candidate.
            self._baseline = self._fetch_baseline()
        self._load(library)
        self._trials()
        self._other_rows()
        self._buffers_after_trials()
        self._buffer_reuse_and_determinism()
        self._compute_and_streams()
        # Timing holds no trial tensors: only its own input sets and outputs.
        self._release_trials()
        if cfg.timing and not self.verdict.failed_checks:
            self._timing()
        elif cfg.timing:
            self.verdict.skipped_checks["timing"] = "correctness or guard checks failed"

    def _cache_dir(self) -> str:
        return self.config.cache_dir or DEFAULT_CACHE_DIR

    def _build(self) -> Optional[str]:
        if not self.files or not self.files.cuda:
            return None
        with self._stage("build"), self._candidate_runs():
            pending = Builder(self._cache_dir(), self.config.arch).start(self.files.cuda)
            warm_profiler(self.device)  # while nvcc runs: the kernel trace's first session then costs nothing
            result = pending.result()
        self.verdict.build = {k: v for k, v in result.to_json().items() if k != "log"}
        if not result.ok:
            errors = [d for d in result.diagnostics if d.severity == "error"] or result.diagnostics
            for d in errors[:20]:
                self.verdict.add(Finding("build_error", d.message, "build", d.file, d.line))
            raise _CandidateFailed()
        return result.library

    def _reference_precision(self) -> dict[str, Any]:
        """The reference's precision modes as it runs today (design §7): the flags, and which ops
        of the reference run through a library that honours them. Also where the trials' sizes
        are first seen. The reference's buffers are put back afterwards: they must move with the
        trials only, as the candidate's do."""
        rec = ComputeRecorder((self.task.path,))
        saved = [b.clone() for b in self.ref_model.buffers()]
        inputs = self.task.inputs(self.config.seed + 99, self.device)
        with rec:
            outs = self.task.forward(self.ref_model, inputs)
        self._sizes = (_nbytes(inputs), _nbytes(outs))
        self.verdict.tolerance = {**dict(zip(("atol", "rtol"), tolerance_for(outs[0].dtype, self.config.tolerance))),
                                  "dtype": dtype_name(outs[0].dtype), "overrides": self.config.tolerance}
        poison_tensors(outs)
        del inputs, outs
        with torch.no_grad():
            for b, old in zip(self.ref_model.buffers(), saved):
                b.copy_(old)
        flags = precision_state()
        # cuDNN's ops that follow cudnn.allow_tf32: its convolutions, and the RNNs (nn.LSTM, nn.GRU,
        # nn.RNN) it runs as aten::_cudnn_rnn, whose math type the built-in brain matches the same way.
        # By name, not the registry's convolution cost kind: cuDNN's own operators (cudnn_convolution,
        # cudnn_convolution_transpose) are no registered operators, yet a reference may reach them.
        conv = sorted(op for op in rec.ops if "conv" in op.split("::")[-1] or op == "aten::_cudnn_rnn")
        gemms = op_registry.names("gemm")
        matmul = sorted(op for op in rec.ops if op.split("::")[-1] in gemms)
        tf32_ops = (conv if flags["cudnn.allow_tf32"] else []) + (matmul if flags["cuda.matmul.allow_tf32"] else [])
        on_gpu = self.device.type == "cuda"
        return {"flags": flags, "conv_ops": conv, "matmul_ops": matmul,
                "tf32_ops": tf32_ops if on_gpu else [], "device": str(self.device)}

    def _add_static(self, static: list[Finding]) -> None:
        eager = self.config.precision != "fp32"  # a job that asks for exact fp32 excuses no TF32
        for f in static:
            if eager and reference_runs_in_tf32(f, self.verdict.reference_precision):
                continue  # the reference itself computes those ops in TF32: matching it is no downgrade
            self.verdict.add(f)

    def _load(self, library: Optional[str]) -> None:
        with self._stage("load"), self._candidate_runs():
            self._load_candidate(library)
        # Built under the reference's seed, ModelNew holds the reference's weights or it is wrong
        # wherever it is built: nothing is copied (KernelBench copies nothing either).
        difference = construction_difference(self.ref_model, self.model)
        if difference:
            self.verdict.add(Finding("weights_differ", f"{difference}, both built under seed {self.config.seed}: ModelNew must "
                                     "create its parameters and buffers as Model does (same modules, same order, same "
                                     "initialization); nothing is copied from the reference", "comparison"))

    def _load_candidate(self, library: Optional[str]) -> None:
        self.snapshot = StateSnapshot.take()
        assert self.files is not None
        with ThreadWatch() as watch:
            try:
                module = load_module(self.files.python, "candidate", {"__stitch_library__": library} if library else None)
            except HarnessError as err:
                if err.code == "cuda_sticky_error":
                    raise
                if self._needs_gpu(err, importing=True):
                    raise _CandidateFailed() from err
                self.verdict.add(Finding("candidate_load_error", err.message, "runtime", err.file, err.line))
                raise _CandidateFailed() from err
            # A partial candidate declares the operators it leaves in PyTorch; the compute guard
            # accepts those (and the verdict reports them), nothing else.
            self.declared_ops = {str(k): int(v) for k, v in dict(getattr(module, "STITCH_PYTORCH_OPS", None) or {}).items()}
            self.verdict.pytorch_ops = self.declared_ops
            self.any_rows = getattr(module, "STITCH_ANY_ROWS", False) is True
            cls = getattr(module, "ModelNew", None)
            if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
                self.verdict.add(Finding("candidate_load_error", "the candidate defines no nn.Module named ModelNew", "runtime", self.files.python))
                raise _CandidateFailed()
            if issubclass(cls, self.task.model_cls) or any(b.__name__ == self.task.names.model_class for b in cls.__mro__[1:]):
                self.verdict.add(Finding("subclasses_reference", f"ModelNew's bases include the reference's {self.task.names.model_class}", "runtime"))
            # KernelBench's construction, as Task.instantiate builds the reference: seed, init
            # inputs, seed again, construct on the CPU, then move.
            init = self.task.init_inputs(self.config.seed)
            torch.manual_seed(self.config.seed)
            try:
                self.model = cls(*init).to(self.device)
            except Exception as exc:
                self._candidate_error("candidate_load_error", exc, "ModelNew.__init__")
        self.verdict.extend(watch.findings("while loading"))
        self._guard("while loading")

    def _trial_inputs(self, i: int) -> tuple[int, str, list[Any]]:
        """Trial i's inputs, the same every time they are drawn: the seeded get_inputs(), or for the
        last trial the same shapes from another distribution."""
        seed = self.config.seed + i
        inputs = self.task.inputs(seed, self.device)
        if i == self.config.trials:
            inputs, distribution = redistribute(inputs, seed)
            return seed, distribution, inputs
        return seed, "get_inputs", inputs

    def _plan_memory(self) -> None:
        """What later checks need is the candidate's outputs of trials 0 and 1 (their inputs are drawn
        again from the seed): kept on the device while two sets of outputs take at most a third of
        its free memory (a trial itself holds about five times its outputs: inputs, the candidate's
        copy, its outputs and their copy, the reference's), else on the CPU. Trials small against
        free memory also give the reference a clone of the inputs and compute the truth on trial 0."""
        free = self._free_bytes()
        trial = sum(self._sizes)
        self._on_device = 2 * self._sizes[1] <= free // 3
        self._small = 2 * trial <= free // 4
        self.verdict.memory = {"free_bytes": free, "trial_bytes": trial, "kept_on": "device" if self._on_device else "cpu"}

    def _trials(self) -> None:
        cfg = self.config
        self._plan_memory()
        specs: list[tuple[list[int], torch.dtype]] = []
        ref_stats: list[list[dict[str, Any]]] = []
        with self._stage("correctness"):
            for i in range(cfg.trials + 1):
                seed, distribution, inputs = self._trial_inputs(i)
                poison_allocator(specs, self.device)
                cand_in = clone_values(inputs)
                outs, raw = self._run_candidate(cand_in, f"in trial {i}")
                self.verdict.extend(alias_findings(raw, cand_in, list(self.model.parameters())))
                del raw
                for k, (a, b) in enumerate(zip(cand_in, inputs)):
                    if isinstance(a, torch.Tensor) and not tensors_equal(a, b):
                        self.verdict.add(Finding("input_mutated", f"forward wrote into input {k} (trial {i})", "comparison"))
                del cand_in
                # The reference runs last: too big to clone, it takes the inputs themselves (it may
                # write into them), and the truth draws them again from the seed when it needs them.
                ref_in = clone_values(inputs) if self._small else inputs
                if not self._small:
                    inputs = None
                ref_outs = self.task.forward(self.ref_model, ref_in)
                del ref_in
                specs = [(list(t.shape), t.dtype) for t in ref_outs]
                given = inputs
                record = self._compare(outs, ref_outs, i, seed, distribution,
                                       lambda: given if given is not None else self._trial_inputs(i)[2])
                self.verdict.trials.append(record)
                if i < 2:
                    self._cand_outs.append(self._keep(outs) if not self._on_device else outs)
                if distribution == "get_inputs":
                    ref_stats.append([summary(t) for t in ref_outs])
                poison_tensors(ref_outs)
                del ref_outs, outs
                inputs = given = None  # one trial's tensors alive at a time
            if self._truth is not None:
                self._truth.release()
        self._out_specs = specs
        get_inputs_trials = [t for t in self.verdict.trials if t["distribution"] == "get_inputs"]
        self.verdict.kernelbench_strict = all(t["outputs"] and all(o["kernelbench_strict"] for o in t["outputs"])
                                              for t in get_inputs_trials)
        rules = [t["rule"] for t in self.verdict.trials]
        self.verdict.correctness_rule = None if None in rules else "truth" if "truth" in rules else "reference"
        self._flag_degenerate(ref_stats)

    def _other_rows(self) -> None:
        """A program that takes the rows of each call (STITCH_ANY_ROWS) runs once more on the first
        B/2 + 1 of trial 0's B rows (B - 1 for B = 2), against the reference on the same rows, by the
        trials' rules: what it computes from the call's rows is checked, not only the sizes the trials
        give it."""
        if not self.any_rows:
            return
        if not self._small:
            self.verdict.skipped_checks["other_rows"] = "the trials are too large against free memory for another batch beside them"
            return
        with self._stage("other_rows"):
            seed, _, inputs = self._trial_inputs(0)
            batches = {v.shape[0] for v in inputs if isinstance(v, torch.Tensor) and v.dim()}
            if len(batches) != 1 or min(batches) < 2:
                self.verdict.skipped_checks["other_rows"] = "the inputs have no common batch of two rows or more"
                return
            batch = batches.pop()
            rows = batch // 2 + 1 if batch > 2 else 1
            part = [v[:rows].clone() if isinstance(v, torch.Tensor) and v.dim() else v for v in inputs]
            del inputs
            outs, raw = self._run_candidate(clone_values(part), f"on {rows} of {batch} rows")
            del raw
            refs = self.task.forward(self.ref_model, clone_values(part))
            record = self._compare(outs, refs, len(self.verdict.trials), seed, f"get_inputs, its first {rows} of {batch} rows",
                                   lambda kept=part: kept)  # bound now: `part` is deleted below
            self.verdict.trials.append(record)
            del outs, refs, part

    def _truth_for(self, i: int, inputs: Callable[[], list[Any]], refs: list[torch.Tensor]) -> tuple[Optional[Truth], str]:
        assert self._truth is not None
        t0 = time.perf_counter()
        truth, why = self._truth.outputs(inputs(), refs)
        self.verdict.durations_s["ground_truth"] = round(self.verdict.durations_s.get("ground_truth", 0.0)
                                                         + time.perf_counter() - t0, 4)
        return truth, why

    def _compare(self, outs: list[torch.Tensor], refs: list[torch.Tensor], i: int, seed: int, distribution: str,
                 inputs: Callable[[], list[Any]]) -> dict[str, Any]:
        """Each output passes by the plain rule (within tolerance of eager) or by the truth rule
        (no further from the fp64 truth than eager, plus the tolerance); the truth is computed only
        where the plain rule fails, and on trial 0 while trials are small (the verdict's summary)."""
        record: dict[str, Any] = {"index": i, "seed": seed, "distribution": distribution, "passed": True,
                                  "rule": "reference", "outputs": []}
        if len(outs) != len(refs):
            self.verdict.add(Finding("output_structure", f"{len(outs)} outputs, the reference has {len(refs)}", "comparison"))
            record.update(passed=False, rule=None)
            return record
        truth: Optional[Truth] = None
        why = ""
        if i == 0 and self._small:
            truth, why = self._truth_for(i, inputs, refs)
        for k, (a, e) in enumerate(zip(outs, refs)):
            c = compare(a, e, self.config.tolerance)
            out: dict[str, Any] = {"max_abs_err": c.max_abs_err, "max_rel_err": c.max_rel_err, "mismatched": c.mismatched,
                                   "numel": c.numel, "rule": "reference" if c.ok else None,
                                   "kernelbench_strict": c.shape_ok and c.strict_mismatched == 0}
            self.verdict.tolerance = {"atol": c.atol, "rtol": c.rtol, "dtype": dtype_name(e.dtype),
                                      "overrides": self.config.tolerance}
            value_miss = c.shape_ok and not c.close and not c.nan_inf_introduced and e.is_floating_point()
            if value_miss and truth is None and not why:
                truth, why = self._truth_for(i, inputs, refs)
            if truth is not None and k < len(truth.tensors) and c.shape_ok and (
                    truth.tensors[k].shape[1:] == e.shape[1:] if truth.rows is not None else truth.tensors[k].shape == e.shape):
                t = compare_with_truth(a, e, truth.tensors[k], c.atol, c.rtol, rows=truth.rows)
                out.update(candidate_truth_err=t.candidate_err, reference_truth_err=t.reference_err)
                if t.rows is not None:
                    out["truth_rows"] = {"rows": t.rows, "of": t.of_rows, "why": truth.why_sampled}
                if value_miss and t.passed:
                    out["rule"] = "truth"
            elif value_miss:
                out["truth_skipped"] = why or "the fp64 truth has another shape"
            record["outputs"].append(out)
            where = f"output {k}, trial {i} ({distribution} inputs, seed {seed})"
            on_rows = f" (on {out['truth_rows']['rows']} of {out['truth_rows']['of']} rows)" if "truth_rows" in out else ""
            against = (f"; against the fp64 truth{on_rows} the candidate is {out['candidate_truth_err']:.3g} off, the "
                       f"reference {out['reference_truth_err']:.3g}" if "candidate_truth_err" in out else
                       f"; fp64 truth skipped: {out['truth_skipped']}" if "truth_skipped" in out else "")
            checks = [("shape_mismatch", not c.shape_ok, f"{where}: shape {c.actual['shape']} vs {c.expected['shape']}"),
                      ("dtype_mismatch", not c.dtype_ok, f"{where}: dtype {c.actual['dtype']} vs {c.expected['dtype']}"),
                      ("device_mismatch", not c.device_ok, f"{where}: device {c.actual['device']} vs {c.expected['device']}"),
                      ("nan_or_inf", c.nan_inf_introduced, f"{where}: NaN/Inf where the reference is finite"),
                      ("output_mismatch", c.shape_ok and not c.close and out["rule"] != "truth",
                       f"{where}: {c.mismatched}/{c.numel} elements outside atol={c.atol} rtol={c.rtol}, "
                       f"max abs err {c.max_abs_err:.3g}{against}")]
            # The fp64 truth's distances travel as numbers too: a candidate that misses by as much as
            # the reference is off the truth rounds as eager does (TF32 both), one far further off does not.
            data = {"trial": i, "output": k, **{key: out[key] for key in ("candidate_truth_err", "reference_truth_err")
                                                if key in out}}
            for name, failed, message in checks:
                if failed:
                    record.update(passed=False, rule=None)
                    self.verdict.add(Finding(name, message, "comparison", data=data))
            if record["rule"] == "reference" and out["rule"] == "truth":
                record["rule"] = "truth"
        if truth is not None and not self.verdict.ground_truth:
            self.verdict.ground_truth = {"trial": i, "reference_max_abs_err": [o.get("reference_truth_err") for o in record["outputs"]],
                                         "candidate_max_abs_err": [o.get("candidate_truth_err") for o in record["outputs"]]}
            if truth.rows is not None:
                self.verdict.ground_truth["sampled"] = truth.why_sampled
        elif why and not self.verdict.ground_truth:
            self.verdict.ground_truth = {"trial": i, "skipped": why}
        return record

    def _flag_degenerate(self, stats: list[list[dict[str, Any]]]) -> None:
        atol = float(self.verdict.tolerance.get("atol", 1e-4))
        first = [s[0] for s in stats if s]
        same = same_every_seed(stats)
        if same:
            self.verdict.flags.append({"name": "degenerate_reference", "reason": "the reference output is identical for every seed"})
        vacuous = ""
        if first and all(s["abs_max"] <= atol for s in first):
            vacuous = f"the reference output is within atol ({atol}) of zero"
        elif first and all(s["std"] <= atol for s in first):
            vacuous = "the reference output is (near-)constant across its elements"
        if vacuous:
            self.verdict.flags.append({"name": "degenerate_reference", "reason": vacuous})
            self._check_constant_output(stats, same, vacuous)

    def _check_constant_output(self, stats: list[list[dict[str, Any]]], same: bool, vacuous: str) -> None:
        """Where the tolerance alone cannot tell (a reference within atol of zero or of a constant),
        an output that is one value everywhere and for every seed, while the reference's varies, is
        hard-coded: a constant passes such a comparison without computing anything."""
        reference_varies = any(o["std"] > 0 for s in stats for o in s) or not same
        if not reference_varies or len(self._cand_outs) < 2:
            return
        cand = [[summary(t) for t in outs] for outs in self._cand_outs]
        if all(o["std"] == 0 for s in cand for o in s) and same_every_seed(cand):
            self.verdict.add(Finding("constant_output", f"every output is one constant value for every input, where {vacuous} "
                                     "but varies: a constant passes the tolerance there without computing anything", "comparison"))

    def _buffers_after_trials(self) -> None:
        """Both models ran the same trial inputs the same number of times: their buffers (BatchNorm's
        running statistics in training mode) must have moved alike."""
        with self._stage("buffers"):
            tol = self.config.tolerance
            mismatches, _ = buffer_differences(self.ref_model, self.model, tol)
            if mismatches:
                truth, why = self._buffer_truth()
                if truth is None:
                    self.verdict.ground_truth["buffers_skipped"] = why
                else:
                    mismatches, by_truth = buffer_differences(self.ref_model, self.model, tol, truth)
                    if by_truth:
                        self.verdict.ground_truth["buffers_by_truth"] = by_truth
            for message in mismatches:
                self.verdict.add(Finding("buffer_mismatch", message, "comparison"))

    def _buffer_truth(self) -> tuple[Optional[dict[str, torch.Tensor]], str]:
        """The reference's buffers as they move in float64: Model built again under the seed, cast
        to float64 and run on every trial's inputs (drawn again from their seeds) in order, so
        running statistics can be judged by the truth rule as outputs are. (None, why) where it
        cannot run."""
        try:
            model = self.task.instantiate(self.device, self.config.seed).double()
            with torch.no_grad():
                for i in range(self.config.trials + 1):
                    x64 = to_float64(self._trial_inputs(i)[2])
                    self.task.forward(model, x64)
                    del x64
            return {name: b for name, b in model.named_buffers()}, ""
        except Exception as exc:
            if is_sticky_cuda_error(exc):
                raise
            if is_out_of_memory(exc):
                return None, "the fp64 run of the trials for the buffers' truth ran out of memory"
            return None, f"the reference failed in float64: {type(exc).__name__}: {exc}"[:300]
        finally:
            if self.device.type == "cuda":
                torch.cuda.empty_cache()

    def _buffer_reuse_and_determinism(self) -> None:
        """Same buffers, new values: a candidate that caches by pointer (or by anything but the
        values) returns the old answer. Also: the same input twice must give the same answer.
        Judged against the candidate's own outputs of trials 0 and 1 (each already judged against
        the reference, by either rule)."""
        if len(self._cand_outs) < 2:
            return
        # Only a candidate right on trials 0 and 1 can show these faults specifically; a wrong one
        # has already failed by name and would only add noise here.
        trial0_ok = self.verdict.trials[0]["passed"]
        trial1_ok = trial0_ok and self.verdict.trials[1]["passed"]
        tol = self.config.tolerance
        with self._stage("buffer_reuse"):
            buffers = self._trial_inputs(0)[2]
            again, _ = self._run_candidate(buffers, "in the determinism check")
            for k, (a, b) in enumerate(zip(again, self._cand_outs[0])):
                if trial0_ok and not compare(a, b, tol).same_values:
                    self.verdict.add(Finding("nondeterministic_output", f"output {k} differs between two runs on the same inputs", "comparison"))
            del again
            for dst, src in zip(buffers, self._trial_inputs(1)[2]):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src)
            reused, _ = self._run_candidate(buffers, "in the buffer-reuse check")
            for k, (a, e) in enumerate(zip(reused, self._cand_outs[1])):
                if trial1_ok and not compare(a, e, tol).same_values:
                    stale = compare(a, self._cand_outs[0][k], tol).same_values
                    self.verdict.add(Finding("output_cached", f"output {k}: new values in the same input buffers "
                                             + ("returned the previous inputs' result" if stale else "gave a wrong result"), "comparison"))

    def _compute_and_streams(self) -> None:
        assert self.files is not None
        with self._stage("compute_and_streams"), self._candidate_runs():
            inputs = self._trial_inputs(0)[2]
            recorder = ComputeRecorder(self.files.files)
            try:
                with recorder, torch.no_grad():
                    self.model(*inputs)
                _sync(self.device)
            except Exception as exc:
                self._candidate_error("candidate_runtime_error", exc, "ModelNew.forward (compute check)")
            self._guard("in the compute check")
            self.verdict.extend(recorder.findings(self.files.python, self.declared_ops))
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
                    self.verdict.extend(stream_findings(trace, own_kernel_names(self.files.files)))
            elif self.device.type != "cuda":
                self.verdict.skipped_checks["side_stream(profiler)"] = "no CUDA device"

    def _input_sets(self) -> int:
        """Timing rotates among input sets; multi-GB inputs get as many as fit (past L2's size,
        which the timer flushes anyway, rotation adds nothing)."""
        per_set = 2 * sum(self._sizes)
        if per_set == 0:
            return self.config.input_sets
        return max(1, min(self.config.input_sets, self._free_bytes() // per_set))

    def _timing(self) -> None:
        with self._stage("timing"), self._candidate_runs():
            sample, sets = self._time()
        self._judge_timed_calls(sample, sets)

    def _time(self) -> tuple[TimedCalls, list[list[Any]]]:
        cfg = self.config
        timer = Timer(self.device, cfg.timer)
        sets = baseline.input_sets(self.task, self.device, cfg.seed, self._input_sets())
        sample = TimedCalls("candidate", self._out_specs, self.device)
        try:
            # Eager beside the candidate, round by round: the ratio then compares work, not the
            # drift of the GPU and host between this measurement and the cached baseline.
            stats = timer.measure_side_by_side({"eager": self.ref_model, "candidate": self.model}, sets, sample)
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
        timing["input_sets"] = len(sets)
        self.verdict.timing = timing
        return sample, sets

    def _judge_timed_calls(self, sample: TimedCalls, sets: list[list[Any]]) -> None:
        """The timed calls the sample made, each against the reference on the same input set by the
        trials' rules, as one more trial each: a candidate right only outside the timing loop fails."""
        if sample.skipped:
            self.verdict.skipped_checks["timed_outputs"] = sample.skipped
        with self._stage("timed_outputs"):
            for call in sample.calls:
                where = f"timed call {call.round_index + 1} of {sample.iterations}, on timing's input set {call.input_set}"
                try:
                    outs = check_tensor_outputs(call.outputs, self.files.python if self.files else "", None, "candidate")
                except HarnessError as err:
                    self.verdict.add(Finding("output_structure", f"{where}: {err.message}", "runtime", err.file, err.line))
                    continue
                inputs = sets[call.input_set]
                refs = self.task.forward(self.ref_model, clone_values(inputs))
                self.verdict.trials.append(self._compare(outs, refs, len(self.verdict.trials), self.config.seed + 1000 + call.input_set,
                                                         where, lambda: inputs))
                poison_tensors(refs)
                del outs, refs
            sample.calls.clear()

    def _fetch_baseline(self) -> dict[str, Any]:
        cfg = self.config
        with self._stage("baseline"):
            return baseline.run_baseline(self.task, self.device, {
                "cacheDir": cfg.cache_dir, "seed": cfg.seed, "inputSets": self._input_sets(),
                "compile": cfg.compile_baseline, "timer": {"warmup": cfg.timer.warmup, "iterations": cfg.timer.iterations,
                                                           "maxSeconds": cfg.timer.max_seconds}})

    def _roofline(self, inputs: list[Any], median_ms: float) -> dict[str, Any]:
        """Bytes that must move (inputs, weights, outputs once each) over the measured memory
        ceiling (bandwidth.py): a floor no correct candidate can beat by much, since L2 is flushed."""
        if self.device.type != "cuda":
            return {"skipped": "no CUDA device"}
        key = str(self.device)
        if key not in _bandwidth_cache:
            _bandwidth_cache[key] = measure_bandwidth_gbps(self.device, cache_dir=self._cache_dir())
        gbps = _bandwidth_cache[key]
        nbytes = sum(v.numel() * v.element_size() for v in inputs if isinstance(v, torch.Tensor))
        nbytes += sum(p.numel() * p.element_size() for p in self.ref_model.parameters())
        nbytes += self._sizes[1]  # the outputs, as the reference wrote them
        floor_ms = nbytes / (gbps * 1e9) * 1e3 if gbps > 0 else 0.0
        if floor_ms > 0 and median_ms < self.config.roofline_margin * floor_ms:
            self.verdict.add(Finding("faster_than_roofline", f"median {median_ms:.4f} ms is under {self.config.roofline_margin:.0%} of the "
                                     f"memory floor {floor_ms:.4f} ms ({nbytes} bytes at {gbps:.0f} GB/s)", "runtime"))
        return {"bytes": nbytes, "bandwidth_gbps": gbps, "floor_ms": floor_ms}


def verify(reference: str, candidate: str, config: VerifyConfig, report: Optional[StageReport] = None) -> Verdict:
    return Verification(reference, candidate, config, report).run()
