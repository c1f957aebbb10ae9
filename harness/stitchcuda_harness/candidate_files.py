"""Which files make up a candidate: a KernelBench-style `ModelNew` file (maybe with load_inline),
or the fast-path pair of a `.cu` (C ABI) and a thin Python `ModelNew` — given as `X.py` with a
sibling `X.cu`, as `X.cu` with a sibling `X.py`, or as a directory holding one of each."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import Optional

from .errors import HarnessError


@dataclass
class CandidateFiles:
    python: str
    cuda: Optional[str]  # None: a plain KernelBench file

    @property
    def files(self) -> tuple[str, ...]:
        return (self.python,) + ((self.cuda,) if self.cuda else ())

    def builds_cuda_on_import(self) -> bool:
        """Whether importing it compiles CUDA sources (load_inline): that fails in many ways
        (PyTorch's arch detection raises an IndexError) where no GPU is visible."""
        with open(self.python, encoding="utf-8", errors="replace") as f:
            return "cuda_sources" in f.read()


def resolve_candidate(path: str) -> CandidateFiles:
    path = os.path.abspath(path)
    if os.path.isdir(path):
        pys = sorted(glob.glob(os.path.join(path, "*.py")))
        cus = sorted(glob.glob(os.path.join(path, "*.cu")))
        if len(pys) != 1 or len(cus) > 1:
            raise HarnessError("candidate_layout", f"a candidate directory holds exactly one .py and at most one .cu; "
                                                   f"found {len(pys)} .py and {len(cus)} .cu in {path}", path)
        return CandidateFiles(pys[0], cus[0] if cus else None)
    stem, ext = os.path.splitext(path)
    if ext == ".cu":
        if not os.path.isfile(stem + ".py"):
            raise HarnessError("candidate_layout", f"{os.path.basename(path)} needs a thin ModelNew in {os.path.basename(stem)}.py", path)
        return CandidateFiles(stem + ".py", path)
    if not os.path.isfile(path):
        raise HarnessError("file_not_found", f"no such candidate: {path}", path)
    return CandidateFiles(path, stem + ".cu" if os.path.isfile(stem + ".cu") else None)
