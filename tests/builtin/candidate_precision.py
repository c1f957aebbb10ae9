"""The harness's static precision guard over every fixture's generated candidates (design §7):
exact-fp32 candidates name no lower precision; candidates in eager's TF32 precision are flagged
as TF32 per kind of op (cuDNN's math types "conv", cuBLASLt's compute type "matmul"), and the
verifier's rule excuses exactly the kinds the reference runs in TF32 (a TF32 convolution when
eager's convolutions are TF32; a TF32 matmul never when eager's matmuls are fp32); candidates of
a job that allows TF32 pass with that opt-in. Fails naming each candidate that breaks a rule."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness"))
from stitchcuda_harness.static_guards import StaticContext, reference_runs_in_tf32, scan_cxx  # noqa: E402

# The reference's precision as the verifier records it: convolutions in TF32 (PyTorch's default)
# and matmuls in fp32, or both in TF32.
CONV_TF32 = {"conv_ops": ["aten::convolution"], "matmul_ops": ["aten::mm"], "tf32_ops": ["aten::convolution"]}
BOTH_TF32 = {"conv_ops": ["aten::convolution"], "matmul_ops": ["aten::mm"],
             "tf32_ops": ["aten::convolution", "aten::mm"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    gen = subprocess.run([args.generator, args.out], capture_output=True, text=True)
    sys.stderr.write(gen.stderr)
    sources = [line for line in gen.stdout.splitlines() if line.endswith(".cu")]
    problems: list[str] = []
    counts = {"fp32": 0, "eager_tf32": 0, "tensor_cores": 0, "channels_last": 0}  # channels_last: eager's TF32 too
    for src in sources:
        name = os.path.basename(os.path.dirname(src))
        with open(src, encoding="utf-8") as f:
            text = f.read()
        kind = name.rsplit(".", 1)[1] if "." in name else "fp32"
        counts[kind] += 1
        allowed = {"tf32"} if kind == "tensor_cores" else set()
        lowered = [f for f in scan_cxx(text, src, 1, StaticContext("task", allowed), torch_allowed=False)
                   if f.check == "precision_downgrade"]
        if kind in ("fp32", "tensor_cores"):
            problems += [f"{name}: {f.message} (line {f.line})" for f in lowered]
            continue
        ops = {f.data.get("op") for f in lowered}
        if any(f.data.get("precision") != "tf32" for f in lowered) or not ops <= {"conv", "matmul"}:
            problems.append(f"{name}: a finding other than TF32 of a named kind: {[f.message for f in lowered]}")
        has_conv = "sc_conv_launch(" in text
        has_gemm = "_shape = {" in text and "CUBLAS_COMPUTE_32F_FAST_TF32}" in text
        if has_conv and "conv" not in ops:
            problems.append(f"{name}: a TF32 convolution the guard does not see")
        if has_gemm and "matmul" not in ops:
            problems.append(f"{name}: a TF32 GEMM the guard does not see")
        for f in lowered:
            if not reference_runs_in_tf32(f, BOTH_TF32):
                problems.append(f"{name}: not excused where eager runs both in TF32: {f.message}")
            excused = reference_runs_in_tf32(f, CONV_TF32)
            if excused != (f.data.get("op") == "conv"):
                problems.append(f"{name}: {'excused' if excused else 'flagged'} where eager's convolutions are TF32 "
                                f"and its matmuls fp32: {f.message}")
    for p in problems:
        print("FAIL " + p)
    print(f"{len(sources)} candidate(s) scanned ({counts}), {len(problems)} problem(s)")
    return 1 if problems or gen.returncode != 0 or not counts["eager_tf32"] else 0


if __name__ == "__main__":
    sys.exit(main())
