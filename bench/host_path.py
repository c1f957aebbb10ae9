# Host cost of each part of a fast-path candidate's forward (ctypes call, stream lookup,
# descriptors, allocation), per call in microseconds, beside an eager PyTorch op: what the timed
# region pays on top of the kernels. Run on the GPU machine from the repository root:
#   python bench/host_path.py
import ctypes
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, "harness")
import torch  # noqa: E402

from stitchcuda_harness.abi import StitchLibrary, StitchTensor  # noqa: E402

NOOP = r'''#include <cuda_runtime.h>
extern "C" int stitch_forward(void*, int, cudaStream_t) { return 0; }
__global__ void k() {}
extern "C" int launch_only(void*, int, cudaStream_t s) { k<<<1, 32, 0, s>>>(); return (int)cudaGetLastError(); }
'''


def per_call_us(fn, n=3000):
    for _ in range(100):
        fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def main():
    work = tempfile.mkdtemp()
    with open(f"{work}/noop.cu", "w") as f:
        f.write(NOOP)
    subprocess.run(["nvcc", "-O3", "-shared", "-Xcompiler", "-fPIC", "-o", f"{work}/noop.so", f"{work}/noop.cu"], check=True)
    x = torch.randn(8192, 4096, device="cuda")
    o = torch.empty(8192, device="cuda")
    pair = (x, o)
    lib = StitchLibrary(f"{work}/noop.so")
    raw = ctypes.CDLL(f"{work}/noop.so")
    for name in ("stitch_forward", "launch_only"):
        getattr(raw, name).argtypes = [ctypes.POINTER(StitchTensor), ctypes.c_int32, ctypes.c_void_p]
        getattr(raw, name).restype = ctypes.c_int
    slots = (StitchTensor * 2)()
    rows = [
        ("t.shape", lambda: x.shape), ("t.stride()", lambda: x.stride()), ("t.dtype", lambda: x.dtype),
        ("descriptor key of 2 tensors", lambda: tuple([(t.dtype, t.shape, t.stride()) for t in pair])),
        ("t.data_ptr()", lambda: x.data_ptr()), ("set a descriptor's pointer", lambda: setattr(slots[0], "data", 1234)),
        ("torch.cuda.current_stream().cuda_stream", lambda: torch.cuda.current_stream().cuda_stream),
        ("torch._C._cuda_getCurrentRawStream(0)", lambda: torch._C._cuda_getCurrentRawStream(0)),
        ("ctypes call of a C function that does nothing", lambda: raw.stitch_forward(slots, 2, None)),
        ("ctypes call that launches one empty kernel", lambda: raw.launch_only(slots, 2, None)),
        ("StitchLibrary.forward into a no-op", lambda: lib.forward(x, o)),
        ("torch.empty((8192,), ...)", lambda: torch.empty((8192,), dtype=torch.float32, device=x.device)),
        ("torch.relu on 8192 floats (eager op, whole)", lambda: torch.relu(o)),
    ]
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}\n\n| part | µs |\n|---|---|")
    for name, fn in rows:
        print(f"| {name} | {per_call_us(fn):.2f} |")
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
