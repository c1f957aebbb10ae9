"""Runs generated candidates with convolutions on the CPU against their task's Model, with cuDNN's
calls made by a reference convolution (cpu_cuda/conv_stand_in.h) that reads and writes the layout
the candidate tells cuDNN. It checks by number what the layout pass (MemoryFormat.h) changes: the
channels-last copies of inputs and filters, the conversions fused into a region's first and last
kernels, kernels and pooling windows iterating in NHWC order, the channels-last buffers ModelNew
makes and the host's checks of them. Each argument names a folder generate_candidates writes
(FIXTURE or FIXTURE.VARIANT, e.g. 81_conv2d_relu_maxpool.channels_last); its candidate is built and
compared as generated_on_cpu.py builds and compares the elementwise fixtures (three seeds, NaNs
planted in the last, other row counts where the program takes them). Transposed convolutions run
as cuDNN's backward-data computes them; candidates whose steps include a GEMM, an RNN or the direct
transposed-convolution kernel (deconv_on_cpu.py runs that one) cannot run so and fail, saying so."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generated_on_cpu  # noqa: E402

# The library prelude starts with kCommon's first lines (LibraryEmitter.cpp); the steps start at
# the first line that names one (k0_..., k1_...).
PRELUDE = "#include <stdio.h>\n\n// A library call whose rows"
FIRST_STEP = re.compile(r"(?m)^.*\bk\d+_")
# What the stand-in keeps of the candidate's own library prelude, in order: the structs its
# launchers initialize, and the epilogue's pass (NCHW and channels-last), which the stand-in's
# convolution runs after itself as cuDNN's does; and the status helper the launchers call.
KEPT = (
    ("struct sc_conv_epi", r"(?ms)^struct sc_conv_epi \{.*?^\};\n", True),
    ("struct sc_conv_epi_channel", r"(?ms)^struct sc_conv_epi_channel \{.*?^\};\n", True),
    ("sc_conv_epi_pass", r"(?ms)^template <int V>\n__global__ void __launch_bounds__\(256\) sc_conv_epi_pass\(.*?^}\n", True),
    ("sc_conv_epi_pass_nhwc",
     r"(?ms)^template <int V>\n__global__ void __launch_bounds__\(256\) sc_conv_epi_pass_nhwc\(.*?^}\n", True),
    ("struct sc_conv_shape", r"(?ms)^struct sc_conv_shape \{.*?^\};\n", True),
    ("sc_elements", r"(?ms)^static int64_t sc_elements\(.*?^}\n", True),
    ("sc_conv_epilogue", r"(?ms)^static int sc_conv_epilogue\(const sc_conv_shape\* s, float\* y, const sc_conv_epi\* e, "
                         r"cudaStream_t stream\) \{.*?^}\n", True),
    ("sc_step_status", r"(?ms)^static int sc_step_status\(.*?^}\n", False),
)
MATH = ("enum cudnnMathType_t { CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, "
        "CUDNN_FMA_MATH };\n")


def stand_in(text: str) -> str:
    """The candidate with its library prelude replaced by the stand-in, keeping the candidate's own
    definitions of the structs its launchers initialize."""
    start = text.find(PRELUDE)
    if start < 0:
        raise ValueError("the candidate has no library prelude")
    first = FIRST_STEP.search(text, start)
    steps = text[first.start():]
    for call in ("sc_gemm_launch(", "sc_rnn_launch(", "sc_deconv_launch<"):
        if call in steps:
            raise ValueError(f"a step calls {call[:-1]}, which the CPU stand-in does not make")
    prelude = text[start:first.start()]
    kept = ""
    for name, pattern, required in KEPT:
        m = re.search(pattern, prelude)
        if m:
            kept += m.group(0)
        elif required:
            raise ValueError(f"the library prelude has no {name}")
    return text[:start] + "#include <cmath>\n" + MATH + kept + '#include "conv_stand_in.h"\n\n' + steps


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("candidates", nargs="+")
    args = ap.parse_args()
    generated = os.path.join(args.out, "generated")
    gen = subprocess.run([args.generator, generated], capture_output=True, text=True)
    failed = 0
    for name in args.candidates:
        fixture = name.split(".")[0]
        source = os.path.join(generated, name, "candidate.cu")
        if not os.path.exists(source):
            print(f"FAIL {name}: no candidate was generated\n{gen.stderr}")
            failed += 1
            continue
        # compare() finds the fixture by its folder's name.
        folder = os.path.join(args.out, name, fixture)
        os.makedirs(folder, exist_ok=True)
        shutil.copy(os.path.join(generated, name, "model_new.py"), folder)
        try:
            with open(source) as f:
                text = stand_in(f.read())
        except ValueError as e:
            print(f"FAIL {name}: {e}")
            failed += 1
            continue
        with open(os.path.join(folder, "candidate.cu"), "w") as f:
            f.write(text)
        library, error = generated_on_cpu.build(os.path.join(folder, "candidate.cu"), args.cxx, "vector")
        if error:
            print(f"FAIL {name}: does not compile as C++\n{error}")
            failed += 1
            continue
        p = subprocess.run([sys.executable, generated_on_cpu.__file__, "--out", os.path.dirname(folder), "--run", fixture,
                            library], capture_output=True, text=True)
        if p.returncode != 0:
            why = p.stdout.strip() or (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
            print(f"FAIL {name}: {why}")
            failed += 1
        else:
            print(f"ok   {name}")
    print(f"{len(args.candidates) - failed} candidate(s) agree with their Model on the CPU, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
