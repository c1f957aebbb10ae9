"""The CUDA-engineering dimension's measured evidence (protocol/SCORE.md): a candidate's kernels as
Nsight Compute measured them over one forward pass — the CSV `NcuRunner` writes (`ncu --csv --page
raw --print-units base` with the SpeedOfLight, Occupancy, LaunchStats, MemoryWorkloadAnalysis,
ComputeWorkloadAnalysis, WarpStateStats and InstructionStats sections; profiling/NcuRunner.cpp).

Only counters those sections collect are read. With them a technique the code reading found is
confirmed or contradicted by the kernels that really ran (a shared-memory kernel that never
launches, tensor-core instructions on a tensor pipe that stays idle), and a memory-bound candidate
that moves no more bytes than the task must, near the DRAM peak, earns `bandwidth_efficiency`. What
the sections do not count (vector widths, shuffles, LDGSTS) stays as the compiled code says."""
from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from .errors import HarnessError

# A kernel uses tensor cores when its busiest tensor pipe is active at least this share of peak.
# Below it is noise: the FP32 elementwise kernel chain_vec4, with no MMA instruction, reads 1.1-1.4%
# on the HMMA pipe (tests/profiling/fixtures/recorded/ncu_memory_bound.csv, H200).
TENSOR_PIPE_MIN_PCT = 5.0
# Bandwidth efficiency: the memory-bound kernels (DRAM busier than the SMs) take at least this share
# of the candidate's GPU time, run at this % of ncu's DRAM peak (the best copy kernels reach ~88% of
# it on an H100/H200, so 60% is two thirds of what a copy achieves), and the forward moves at most
# this multiple of the bytes the task must move (timing.roofline.bytes of the verdict).
MEMORY_BOUND_TIME_SHARE = 0.5
DRAM_EFFICIENT_PCT = 60.0
TRAFFIC_MAX_RATIO = 1.5

# The file a candidate folder keeps its profile in (NcuRunner's log as written).
PROFILE_FILE = "ncu.csv"

_TIME_SCALE = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}
_BYTE_SCALE = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
               "Kibyte": 1024.0, "Mibyte": 1048576.0, "KiB": 1024.0, "MiB": 1048576.0}
# Kernels of PyTorch's own operators (what a candidate leaves in PyTorch), by namespace.
_PYTORCH = re.compile(r"\b(?:at|c10|at_cuda_detail)::")
_KERNEL_NAME = re.compile(r"__global__\s+(?:(?:static|inline|__launch_bounds__\s*\([^)]*\))\s+)*void\s+"
                          r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
_TMA = re.compile(r"bulk|UTMA|UBLKCP|cuTensorMap|\bTMA\b")


def _number(text: str) -> Optional[float]:
    text = (text or "").replace(",", "").strip()
    try:
        v = float(text)
    except ValueError:
        return None
    return v if v == v and abs(v) != float("inf") else None


@dataclass
class Kernel:
    """One launch as ncu measured it: its raw metrics by name, (unit, text)."""
    id: int
    name: str
    metrics: dict[str, tuple[str, str]] = field(default_factory=dict)

    def value(self, *names: str) -> Optional[tuple[str, float]]:
        """The first of `names` with a number, as (name, value)."""
        for n in names:
            if n in self.metrics:
                v = _number(self.metrics[n][1])
                if v is not None:
                    return n, v
        return None

    def scaled(self, name: str, table: dict[str, float]) -> Optional[float]:
        if name not in self.metrics:
            return None
        unit, text = self.metrics[name]
        v = _number(text)
        return None if v is None else v * table.get(unit.split("/")[0], 1.0)

    def largest(self, prefix: str, suffix: str) -> Optional[tuple[str, float]]:
        best: Optional[tuple[str, float]] = None
        for n, (_, text) in self.metrics.items():
            if n.startswith(prefix) and n.endswith(suffix):
                v = _number(text)
                if v is not None and (best is None or v > best[1]):
                    best = (n, v)
        return best

    # The counters the rubric reads (NcuCsvParser.cpp reads the same names).
    @property
    def base_name(self) -> str:
        """The kernel's own name: no return type, namespaces, template arguments or parameters."""
        s = re.sub(r"<unnamed>::|\(anonymous namespace\)::", "", self.name.strip())
        s = re.sub(r"^void\s+", "", s)
        s = re.split(r"[<(]", s, 1)[0]
        return s.split("::")[-1].strip()

    @property
    def duration_us(self) -> Optional[float]:
        return self.scaled("gpu__time_duration.sum", _TIME_SCALE)

    @property
    def dram_pct(self) -> Optional[tuple[str, float]]:
        return self.value("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                          "dram__throughput.avg.pct_of_peak_sustained_elapsed")

    @property
    def sm_pct(self) -> Optional[tuple[str, float]]:
        return self.value("sm__throughput.avg.pct_of_peak_sustained_elapsed")

    @property
    def tensor_pct(self) -> Optional[tuple[str, float]]:
        return (self.largest("sm__pipe_tensor", "cycles_active.avg.pct_of_peak_sustained_active")
                or self.largest("sm__inst_executed_pipe_tensor", ".avg.pct_of_peak_sustained_active"))

    @property
    def tma_pct(self) -> Optional[tuple[str, float]]:
        found = [v for v in (self.value("sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active"),
                             self.value("sm__inst_executed_pipe_tma.avg.pct_of_peak_sustained_active")) if v]
        return max(found, key=lambda v: v[1]) if found else None

    @property
    def shared_bytes(self) -> Optional[float]:
        """Shared memory per block the kernel asked for (static + dynamic); the 1 KiB the driver
        reserves for every block (launch__shared_mem_per_block_driver) is not the kernel's."""
        parts = [self.scaled(n, _BYTE_SCALE) for n in ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic")]
        return None if all(p is None for p in parts) else sum(p or 0.0 for p in parts)

    @property
    def barriers(self) -> Optional[float]:
        v = self.value("launch__barrier_count")
        return v[1] if v else None

    @property
    def dram_bytes(self) -> Optional[float]:
        total = self.scaled("dram__bytes.sum", _BYTE_SCALE)
        if total is not None:
            return total
        parts = [self.scaled(n, _BYTE_SCALE) for n in ("dram__bytes_read.sum", "dram__bytes_write.sum")]
        return None if all(p is None for p in parts) else sum(p or 0.0 for p in parts)

    def summary(self, role: str) -> dict[str, Any]:
        def pct(v: Optional[tuple[str, float]]) -> Optional[float]:
            return round(v[1], 2) if v else None
        occ = self.value("sm__warps_active.avg.pct_of_peak_sustained_active")
        return {"name": self.base_name, "role": role, "durationUs": _round(self.duration_us), "dramPct": pct(self.dram_pct),
                "smPct": pct(self.sm_pct), "tensorPipePct": pct(self.tensor_pct), "tmaPipePct": pct(self.tma_pct),
                "sharedBytesPerBlock": _round(self.shared_bytes), "barriers": self.barriers,
                "achievedOccupancyPct": pct(occ), "dramBytes": _round(self.dram_bytes)}


def _round(v: Optional[float]) -> Optional[float]:
    return None if v is None else round(v, 3)


def parse_ncu_csv(text: str) -> list[Kernel]:
    """ncu's CSV (the raw page, one row a launch with a units row under the header; or the long
    form, one row a metric) as launches in ID order. Raises ValueError when it holds no table."""
    rows = list(csv.reader(io.StringIO(text)))
    header_at = next((i for i, r in enumerate(rows) if "ID" in r and "Kernel Name" in r), None)
    if header_at is None:
        raise ValueError('no Nsight Compute table (no header with "ID" and "Kernel Name"); was ncu run with --csv?')
    header = rows[header_at]
    col = {name: i for i, name in reversed(list(enumerate(header)))}
    long_form = "Metric Name" in col
    units: Optional[list[str]] = None
    kernels: dict[int, Kernel] = {}
    for row in rows[header_at + 1:]:
        if len(row) < len(header):
            continue
        kid = _number(row[col["ID"]])
        if kid is None:
            if not long_form and units is None:
                units = row  # the raw page's units row (its ID cell is empty)
            continue
        k = kernels.setdefault(int(kid), Kernel(int(kid), row[col["Kernel Name"]]))
        if long_form:
            k.metrics[row[col["Metric Name"]]] = (row[col.get("Metric Unit", -1)] if "Metric Unit" in col else "",
                                                  row[col["Metric Value"]])
        else:
            for i, name in enumerate(header):
                k.metrics[name] = ((units[i] if units and i < len(units) else ""), row[i])
    if not kernels:
        raise ValueError("the Nsight Compute table lists no kernel")
    return [kernels[i] for i in sorted(kernels)]


@dataclass
class Profile:
    path: str
    source: str  # "given" (--profile) or "candidate folder"
    kernels: list[Kernel]

    @property
    def device(self) -> Optional[str]:
        for k in self.kernels:
            if k.metrics.get("device__attribute_display_name", ("", ""))[1]:
                return k.metrics["device__attribute_display_name"][1]
        return None


def find_profile(candidate: str, given: Optional[str]) -> tuple[Optional[Profile], str]:
    """The candidate's profile: the file given, else its folder's ncu.csv. (None, why) without one.
    A file given that cannot be read is an error; a folder's that cannot is reported and skipped."""
    path, source = (given, "given") if given else (os.path.join(candidate, PROFILE_FILE), "candidate folder")
    if not given and not (os.path.isdir(candidate) and os.path.isfile(path)):
        return None, "none (no profile)"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return Profile(os.path.abspath(path), source, parse_ncu_csv(f.read())), "ncu"
    except (OSError, ValueError) as e:
        if given:
            raise HarnessError("invalid_params", f"profile {path}: {e}", path) from e
        return None, f"none ({path} is not an Nsight Compute CSV: {e})"


def source_kernel_names(cuda_source: str) -> list[str]:
    return sorted(set(_KERNEL_NAME.findall(cuda_source)))


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def _mb(v: float) -> str:
    return f"{v / 1e6:.1f} MB"


class Measured:
    """The candidate's launches, split by whose they are: its own kernels (named in its CUDA), its
    library calls' (any other kernel but PyTorch's, when it makes library calls), PyTorch's."""

    def __init__(self, profile: Profile, cuda_source: str, library_calls: int):
        self.profile = profile
        self.defined = source_kernel_names(cuda_source)
        names = set(self.defined)
        self.role: dict[int, str] = {}
        for k in profile.kernels:
            self.role[k.id] = ("own" if k.base_name in names else "pytorch" if _PYTORCH.search(k.name)
                               else "library" if library_calls else "pytorch")
        self.own = [k for k in profile.kernels if self.role[k.id] == "own"]
        self.library = [k for k in profile.kernels if self.role[k.id] == "library"]
        self.candidate = self.own + self.library

    def summary(self, min_bytes: Optional[float]) -> dict[str, Any]:
        total = [k.dram_bytes for k in self.profile.kernels if k.dram_bytes is not None]
        return {"read": "ncu", "file": self.profile.path, "source": self.profile.source, "device": self.profile.device,
                "launches": len(self.profile.kernels), "candidateLaunches": len(self.candidate),
                "dramBytes": round(sum(total)) if total else None, "taskMinBytes": min_bytes,
                "kernels": [k.summary(self.role[k.id]) for k in self.profile.kernels]}

    def _not_launched(self) -> str:
        ran = ", ".join(sorted({k.base_name for k in self.profile.kernels})) or "none"
        return (f"ncu: none of the candidate's kernels ({', '.join(self.defined) or 'none defined'}) ran in the "
                f"profiled forward (launched: {ran})")

    # Each judge returns ("confirmed" | "contradicted" | "not measured: why", evidence lines).
    def shared_memory(self) -> tuple[str, list[str]]:
        if not self.own:
            return "contradicted", [self._not_launched()]
        sized = [(k, k.shared_bytes) for k in self.own if k.shared_bytes is not None]
        used = [(k, b) for k, b in sized if b > 0]
        if used:
            return "confirmed", [f"ncu: {k.base_name}: launch__shared_mem_per_block_static+dynamic = {b:.0f} B" for k, b in used]
        if sized and len(sized) == len(self.own):
            return "contradicted", [f"ncu: {k.base_name}: launch__shared_mem_per_block_static+dynamic = 0 B" for k, _ in sized]
        return "not measured: no launch__shared_mem_per_block_* in the profile", []

    def tiling(self) -> tuple[str, list[str]]:
        state, evidence = self.shared_memory()
        if state != "confirmed":
            return state, evidence
        staged = [k for k in self.own if (k.shared_bytes or 0) > 0]
        counted = [k for k in staged if k.barriers is not None]
        synced = [k for k in counted if k.barriers >= 1]
        if synced:
            return "confirmed", [f"ncu: {k.base_name}: launch__barrier_count = {k.barriers:.0f}, shared {k.shared_bytes:.0f} B"
                                 for k in synced]
        if counted and len(counted) == len(staged):
            return "contradicted", [f"ncu: {k.base_name}: launch__barrier_count = 0 (shared memory no barrier orders)"
                                    for k in counted]
        return "not measured: no launch__barrier_count in the profile", []

    def tensor_cores(self, evidence: list[str], library_pattern: re.Pattern[str]) -> tuple[str, list[str]]:
        from_library = any(library_pattern.search(e) for e in evidence)
        from_kernels = any(not library_pattern.search(e) for e in evidence)
        scope = (self.own if from_kernels else []) + (self.library if from_library else [])
        if not scope:
            return "contradicted", [self._not_launched() if from_kernels else
                                    "ncu: no kernel of the candidate's library calls ran in the profiled forward"]
        measured = [(k, k.tensor_pct) for k in scope if k.tensor_pct is not None]
        busy = [(k, v) for k, v in measured if v[1] >= TENSOR_PIPE_MIN_PCT]
        if busy:
            return "confirmed", [f"ncu: {k.base_name}: {v[0]} = {_fmt(v[1])}%" for k, v in busy]
        if measured and len(measured) == len(scope):
            return "contradicted", [f"ncu: {k.base_name}: {v[0]} = {_fmt(v[1])}% (under {TENSOR_PIPE_MIN_PCT:g}%: idle)"
                                    for k, v in measured]
        return "not measured: no tensor-pipe counter in the profile", []

    def async_copy(self, evidence: list[str]) -> tuple[str, list[str]]:
        if not self.own:
            return "contradicted", [self._not_launched()]
        if all(_TMA.search(e) for e in evidence):  # TMA (cp.async.bulk) has its own pipe
            measured = [(k, k.tma_pct) for k in self.own if k.tma_pct is not None]
            busy = [(k, v) for k, v in measured if v[1] > 0]
            if busy:
                return "confirmed", [f"ncu: {k.base_name}: {v[0]} = {_fmt(v[1])}%" for k, v in busy]
            if measured and len(measured) == len(self.own):
                return "contradicted", [f"ncu: {k.base_name}: {v[0]} = 0%" for k, v in measured]
            return "not measured: no TMA-pipe counter in the profile", []
        # cp.async (LDGSTS) lands in shared memory: a kernel without any cannot have issued one.
        state, shared = self.shared_memory()
        if state == "contradicted":
            return "contradicted", shared + ["an async copy needs shared memory to land in"]
        return "not measured: the profile's sections count no LDGSTS (cp.async) instructions", []

    def launches_for_fusion(self) -> int:
        return len(self.candidate)

    def bandwidth(self, min_bytes: Optional[float]) -> tuple[bool, list[str]]:
        """Memory-bound kernels taking most of the candidate's time, near the DRAM peak, moving no
        more than TRAFFIC_MAX_RATIO times the bytes the task must."""
        if not self.candidate:
            return False, [self._not_launched()]
        timed = [(k, k.duration_us, k.dram_pct, k.sm_pct) for k in self.candidate]
        if any(d is None or dr is None or sm is None for _, d, dr, sm in timed):
            return False, ["not measured: the profile lacks gpu__time_duration, dram or sm throughput for a kernel"]
        total = sum(d for _, d, _, _ in timed)
        bound = [(k, d, dr, sm) for k, d, dr, sm in timed if dr[1] >= sm[1]]
        bound_time = sum(d for _, d, _, _ in bound)
        share = bound_time / total if total > 0 else 0.0
        evidence = [f"ncu: {k.base_name}: {dr[0]} = {_fmt(dr[1])}% vs {sm[0]} = {_fmt(sm[1])}% "
                    f"({'memory' if dr[1] >= sm[1] else 'compute'}-bound, {d:.3g} us)" for k, d, dr, sm in timed]
        if share < MEMORY_BOUND_TIME_SHARE:
            return False, evidence + [f"memory-bound kernels take {share:.0%} of the candidate's GPU time "
                                      f"(under {MEMORY_BOUND_TIME_SHARE:.0%}: not a memory-bound candidate)"]
        achieved = sum(d * dr[1] for _, d, dr, _ in bound) / bound_time
        evidence.append(f"memory-bound kernels at {achieved:.3g}% of DRAM peak, time-weighted "
                        f"({'at least' if achieved >= DRAM_EFFICIENT_PCT else 'under'} {DRAM_EFFICIENT_PCT:g}%)")
        if achieved < DRAM_EFFICIENT_PCT:
            return False, evidence
        moved = [k.dram_bytes for k in self.profile.kernels]
        if not min_bytes or any(b is None for b in moved):
            return False, evidence + ["traffic not judged: no dram__bytes in the profile or no timing.roofline.bytes in "
                                      "the verdict, so high bandwidth may be redundant traffic"]
        ratio = sum(moved) / min_bytes
        evidence.append(f"ncu: dram__bytes_read.sum+dram__bytes_write.sum over the forward = {_mb(sum(moved))}, "
                        f"{ratio:.2f}x the {_mb(min_bytes)} the task must move "
                        f"({'at most' if ratio <= TRAFFIC_MAX_RATIO else 'over'} {TRAFFIC_MAX_RATIO:g}x)")
        return ratio <= TRAFFIC_MAX_RATIO, evidence
