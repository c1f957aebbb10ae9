"""The program Nsight Compute runs (profiling/NcuRunner): builds the reference or a candidate,
warms it up outside any NVTX range, then runs the measured forward passes inside the push/pop
range `stitchcuda.forward`, so `ncu --nvtx --nvtx-include stitchcuda.forward/` profiles exactly
those kernels: the candidate's (or reference's) own, not the warm-up, the input set-up or the
judge's. Run as `python3 -m stitchcuda_harness.ncu_target --task T [--candidate C]`.
On failure it prints one JSON line `{"error": {...}}` on stdout and exits 2.
`launch_facts()` (the worker's ncuTarget method) tells the host how to start it like the worker."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

RANGE = "stitchcuda.forward"
MODULE = "stitchcuda_harness.ncu_target"


def launch_facts() -> dict[str, Any]:
    """The interpreter and package folder of this worker, so the host starts ncu's target with the
    same Python and PyTorch that verified the candidate (the host's own PATH may hold another)."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    return {"python": sys.executable, "harnessDir": os.path.dirname(package_dir), "module": MODULE,
            "nvtxRange": RANGE}


def main(argv: list[str]) -> int:
    from .parent_death import die_with_parent
    die_with_parent()  # ncu is the parent: a host killed outright takes ncu, and so this, with it
    parser = argparse.ArgumentParser(prog=f"python3 -m {MODULE}")
    parser.add_argument("--task", required=True)
    parser.add_argument("--candidate")
    parser.add_argument("--iterations", type=int, default=1, help="forward passes inside the range")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir")
    parser.add_argument("--arch")
    parser.add_argument("--model-class")
    parser.add_argument("--inputs-fn")
    args = parser.parse_args(argv)

    import torch

    from .errors import HarnessError
    from .profile_subject import load_subject
    from .task_loader import load_task

    if not torch.cuda.is_available():
        print(json.dumps({"error": {"code": "no_cuda", "message": "ncu_target needs a CUDA device"}}))
        return 2
    params = {k: v for k, v in (("modelClass", args.model_class), ("inputsFn", args.inputs_fn)) if v}
    device = torch.device("cuda")
    try:
        subject = load_subject(load_task(args.task, params), device, args.seed, args.candidate, args.cache_dir, args.arch)
        with torch.no_grad():
            for _ in range(max(0, args.warmup)):
                subject.model(*subject.inputs)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(RANGE)
            for _ in range(max(1, args.iterations)):
                subject.model(*subject.inputs)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
    except HarnessError as err:
        print(json.dumps({"error": err.to_json()}))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
