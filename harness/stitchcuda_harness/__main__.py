"""Command line: `worker` (the host's JSON Lines worker), `verify` (the verdict for people and
scripts, standing on its own), `build` (fast-path nvcc builds), `export` (KernelBench file)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .errors import HarnessError

EXIT_PASSED, EXIT_FAILED, EXIT_ERROR, EXIT_STICKY, EXIT_NEEDS_GPU = 0, 1, 2, 3, 4
# A verdict's status → exit status: the verifier's own failure is an error, not the candidate's.
_EXIT_BY_STATUS = {"passed": EXIT_PASSED, "failed": EXIT_FAILED, "verifier_error": EXIT_ERROR, "needs_gpu": EXIT_NEEDS_GPU}
_HEADLINE = {"passed": "PASSED", "failed": "FAILED", "verifier_error": "NOT JUDGED (verifier error)", "needs_gpu": "NEEDS A GPU"}


def _print_human(v: dict[str, Any]) -> None:
    print(f"{_HEADLINE.get(v['status'], v['status'])}: {v['candidate']} against {v['reference']}")
    for f in v["findings"]:
        where = f"{f['file']}:{f['line']}: " if f.get("file") else ""
        print(f"  [{f['check']}] {where}{f['message']} ({f['evidence']})")
    for name, why in v["skipped_checks"].items():
        print(f"  skipped {name}: {why}")
    for flag in v["flags"]:
        print(f"  flag {flag['name']}: {flag['reason']}")
    if v.get("trials"):
        rule = {"truth": ", passed by the fp64-truth rule", "reference": ""}.get(v.get("correctness_rule") or "", "")
        strict = {True: "; KernelBench's 1e-4 check: passes", False: "; KernelBench's 1e-4 check: fails"}.get(v.get("kernelbench_strict"), "")
        print(f"  tolerance atol {v['tolerance']['atol']:g}, rtol {v['tolerance']['rtol']:g}{rule}{strict}")
    t = v.get("timing")
    if t:
        comp = f", torch.compile {t['compile']['median_ms']:.4f} ms" if t.get("compile") and "median_ms" in t["compile"] else ""
        print(f"  candidate {t['candidate']['median_ms']:.4f} ms, eager {t['eager']['median_ms']:.4f} ms{comp}, "
              f"speedup vs eager {t['speedup_vs_eager']:.2f}x")


def _kernelbench(args: argparse.Namespace) -> int:
    from .channel import json_safe
    from .kernelbench_protocol import SEED, TRIALS, describe, kernelbench_check
    params = {"seed": SEED if args.seed is None else args.seed, "trials": args.trials or TRIALS, "cacheDir": args.cache_dir,
              "device": args.device, "modelClass": args.model_class, "inputsFn": args.inputs_fn}
    try:
        result = kernelbench_check(args.reference, args.candidate, params)
    except HarnessError as err:
        print(json.dumps({"error": err.to_json()}) if args.json else f"error: {err}")
        return EXIT_STICKY if err.code == "cuda_sticky_error" else EXIT_ERROR
    print(json.dumps(json_safe(result), indent=1) if args.json else describe(result))
    return _EXIT_BY_STATUS.get(result["status"], EXIT_FAILED)


def _verify(args: argparse.Namespace) -> int:
    from .channel import json_safe
    from .verifier import verify
    from .verify_config import VerifyConfig
    if args.kernelbench:
        return _kernelbench(args)
    params: dict[str, Any] = {"trials": args.trials or 5, "seed": args.seed or 0, "timing": not args.no_timing,
                              "compileBaseline": not args.no_compile, "allowPrecision": args.allow_precision,
                              "precision": args.precision,
                              "kernelTrace": not args.no_kernel_trace}
    for key, value in (("atol", args.atol), ("rtol", args.rtol), ("cacheDir", args.cache_dir), ("device", args.device),
                       ("modelClass", args.model_class), ("inputsFn", args.inputs_fn)):
        if value is not None:
            params[key] = value
    try:
        verdict = verify(args.reference, args.candidate, VerifyConfig.from_params(params)).to_json()
    except HarnessError as err:
        print(json.dumps({"error": err.to_json()}) if args.json else f"error: {err}")
        return EXIT_STICKY if err.code == "cuda_sticky_error" else EXIT_ERROR
    if args.json:
        print(json.dumps(json_safe(verdict), indent=1))
    else:
        _print_human(verdict)
    return _EXIT_BY_STATUS.get(verdict["status"], EXIT_FAILED)


def _build(args: argparse.Namespace) -> int:
    from .nvcc_build import Builder
    results = Builder(args.cache_dir, args.arch).build_many(args.sources)
    print(json.dumps([r.to_json() for r in results], indent=1))
    return EXIT_PASSED if all(r.ok for r in results) else EXIT_FAILED


def _export(args: argparse.Namespace) -> int:
    from .kernelbench_export import check_export, write_export
    out = write_export(args.candidate, args.out)
    result: dict[str, Any] = {"path": out}
    if args.reference:
        result["check"] = check_export(args.reference, args.candidate, out, {"cacheDir": args.cache_dir})
    print(json.dumps(result, indent=1))
    return EXIT_PASSED if result.get("check", {"same": True})["same"] else EXIT_FAILED


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m stitchcuda_harness")
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker", help="serve the host over JSON Lines on stdio")
    w.add_argument("--load-timeout", type=float, metavar="SECONDS",
                   help="the most each stage of the model's code (import, __init__, get_inputs, a forward) may take")
    v = sub.add_parser("verify", help="verify a candidate against a reference task")
    v.add_argument("--reference", required=True)
    v.add_argument("--candidate", required=True)
    v.add_argument("--json", action="store_true")
    v.add_argument("--kernelbench", action="store_true",
                   help="KernelBench's protocol instead of the verdict: seeded construction, no state copy, 5 trials, "
                        "allclose against eager at 1e-4 and at 1e-2 (seed 42 unless given)")
    v.add_argument("--trials", type=int)
    v.add_argument("--seed", type=int)
    v.add_argument("--atol", type=float)
    v.add_argument("--rtol", type=float)
    v.add_argument("--allow-precision", action="append", default=[], choices=["tf32", "fp16", "bf16"])
    v.add_argument("--precision", default="eager", choices=["eager", "fp32"],
                   help="eager: TF32 the reference itself runs is no downgrade (default); fp32: it is")
    v.add_argument("--cache-dir")
    v.add_argument("--device")
    v.add_argument("--model-class")
    v.add_argument("--inputs-fn")
    v.add_argument("--no-timing", action="store_true")
    v.add_argument("--no-compile", action="store_true", help="skip the torch.compile baseline")
    v.add_argument("--no-kernel-trace", action="store_true")
    b = sub.add_parser("build", help="nvcc fast-path build(s)")
    b.add_argument("sources", nargs="+")
    b.add_argument("--cache-dir", default=".stitchcuda-cache")
    b.add_argument("--arch")
    e = sub.add_parser("export", help="write the one-file KernelBench export")
    e.add_argument("--candidate", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--reference", help="also check that the export gives the candidate's outputs")
    e.add_argument("--cache-dir")
    args = parser.parse_args(argv)
    if args.command == "worker":
        from .worker import main as worker_main
        return worker_main(args.load_timeout)
    return {"verify": _verify, "build": _build, "export": _export}[args.command](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
