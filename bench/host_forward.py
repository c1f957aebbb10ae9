"""Host time per forward, part by part, of eager PyTorch and of fast-path candidates: what a
sample of the timer pays before the first kernel starts (the timer synchronizes every sample, so
the GPU waits for the host's launch). Each part is called 200 times back to back after a
synchronize and timed on the host only; 200 launches stay within the launch queue, so no call
waits for the GPU. The candidate folder holds candidate.cu and model_new.py per task, as
`generate_candidates DIR` writes them.
    python3 bench/host_forward.py CANDIDATES_DIR TASK [TASK ...]"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import torch  # noqa: E402

from stitchcuda_harness.nvcc_build import Builder  # noqa: E402

import task_and_candidate  # noqa: E402

CALLS = 200


def host_us(fn):
    best = None
    for _ in range(7):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        t = (time.perf_counter() - t0) / CALLS * 1e6
        best = t if best is None else min(best, t)
    torch.cuda.synchronize()
    return best


def main():
    cands, names = sys.argv[1], sys.argv[2:]
    builder = Builder("/tmp/stitchcuda-host-forward")
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}; host µs per call, best of 7 x {CALLS}\n")
    print("| task | eager forward | candidate forward | lib.forward (no allocation) | stitch_forward (ctypes, descriptors ready) |")
    print("|---|---|---|---|---|")
    for name in names:
        tm, model, cand, built = task_and_candidate.load(cands, name, builder)
        if cand is None:
            print(f"| {name} | candidate build failed: {built.diagnostics[:1]} |||")
            continue
        inputs = [x.cuda() for x in tm.get_inputs()]
        with torch.no_grad():
            out = cand(*inputs)
            lib = cand.lib
            tensors = [*inputs, out] if isinstance(out, torch.Tensor) else None
            row = [host_us(lambda: model(*inputs)), host_us(lambda: cand(*inputs))]
            # The two library columns where the forward passes its inputs and output as they are
            # (no parameters, no views): else n/a.
            if tensors is not None and len(lib._descriptors) == 1 and sum(1 for _ in cand.parameters()) == 0 \
                    and next(iter(lib._descriptors)) == tuple([(t.dtype, t.shape, t.stride()) for t in tensors]):
                args = next(iter(lib._descriptors.values()))
                stream = torch.cuda.current_stream().cuda_stream
                row += [host_us(lambda: lib.forward(*tensors)), host_us(lambda: lib._forward(args, len(tensors), stream))]
            else:
                row += [float("nan"), float("nan")]
        print(f"| {name} | " + " | ".join("n/a" if v != v else f"{v:.1f}" for v in row) + " |", flush=True)


if __name__ == "__main__":
    main()
