"""The loader written beside an accepted model (agents/program/loader.py): its checks of the
tensors it is given, the fallback for unseen shapes, and its nvcc build, on a machine without a GPU.
The loader is installed the way Accept installs it: as the package stitchcuda_kernels."""
from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
import unittest
import warnings

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOADER = os.path.join(REPO, "agents", "program", "loader.py")
ABI = os.path.join(REPO, "harness", "stitchcuda_harness", "include", "stitch_abi.h")

# A one-kernel program in the ABI's form (header inlined, as ProgramFiles writes it): out = 2 * x.
PROGRAM = open(ABI).read() + r'''
__global__ void twice(const float* x, float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
extern "C" int stitch_forward(const StitchTensor* t, int32_t n, cudaStream_t stream) {
  if (n != 2) return (int)cudaErrorInvalidValue;
  long count = t[0].sizes[0] * t[0].sizes[1];
  twice<<<(count + 255) / 256, 256, 0, stream>>>((const float*)t[0].data, (float*)t[1].data, count);
  return (int)cudaGetLastError();
}
'''
SPEC = {"x": ("float32", (4, 8), (8, 1))}


class LoaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.root = tempfile.mkdtemp(prefix="stitch-loader-")
        pkg = os.path.join(cls.root, "stitchcuda_kernels")
        os.makedirs(pkg)
        shutil.copy(LOADER, os.path.join(pkg, "__init__.py"))
        with open(os.path.join(pkg, "twice.cu"), "w") as f:
            f.write(PROGRAM)
        with open(os.path.join(pkg, "broken.cu"), "w") as f:
            f.write(PROGRAM + "\nthis is not C++;\n")
        sys.path.insert(0, cls.root)
        cls.k = importlib.import_module("stitchcuda_kernels")
        cls.cache = os.path.join(cls.root, "cache")

    @classmethod
    def tearDownClass(cls) -> None:
        sys.path.remove(cls.root)
        sys.modules.pop("stitchcuda_kernels", None)
        shutil.rmtree(cls.root)

    def program(self):
        return self.k.Program("twice.cu", SPEC)

    def test_inputs_off_the_gpu_run_the_original_forward_with_one_warning(self) -> None:
        p = self.program()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            self.assertEqual(p.route(x=torch.zeros(4, 8)), "original")
            self.assertFalse(p.accepts(x=torch.zeros(4, 8)))
            self.assertEqual(p.route(x=torch.zeros(4, 8, dtype=torch.float64)), "original")  # no error off the GPU
        self.assertEqual(len(seen), 1)
        self.assertIn("x is on cpu and no CUDA GPU is visible here: running the original PyTorch forward",
                      str(seen[0].message))
        self.assertEqual(p.decide(x=torch.zeros(4, 8)), "program")  # what a GPU would run


    def test_an_unseen_shape_falls_back_with_one_warning(self) -> None:
        p = self.program()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            self.assertEqual(p.decide(x=torch.zeros(2, 8)), "original")
            self.assertEqual(p.decide(x=torch.zeros(3, 8)), "original")
        self.assertEqual(len(seen), 1)
        self.assertIn("generated for x of shape (4, 8), got (2, 8)", str(seen[0].message))

    def test_another_batch_size_runs_in_chunks_where_rows_are_independent(self) -> None:
        p = self.k.Program("twice.cu", SPEC, batch=4)
        self.assertEqual(p.decide(x=torch.zeros(7, 8)), "chunks")  # two chunks, one padding row
        self.assertEqual(p.decide(x=torch.zeros(12, 8)), "chunks")  # three whole chunks
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            # A quarter or more of the chunks' rows would be padding: the original forward is cheaper.
            self.assertEqual(p.decide(x=torch.zeros(6, 8)), "original")
            self.assertEqual(p.decide(x=torch.zeros(1, 8)), "original")
            self.assertEqual(p.decide(x=torch.zeros(7, 9)), "original")  # not only the batch differs
        self.assertEqual(len(seen), 1)
        self.assertIn("got (6, 8)", str(seen[0].message))
        # Timed: chunks where their rows stay under the rows given times the program's speedup.
        fast = self.k.Program("twice.cu", SPEC, batch=4, speedup=2.0)
        self.assertEqual(fast.decide(x=torch.zeros(6, 8)), "chunks")  # 8 rows of chunks < 6 x 2
        near = self.k.Program("twice.cu", SPEC, batch=4, speedup=1.1)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            self.assertEqual(near.decide(x=torch.zeros(7, 8)), "original")  # 8 >= 7 x 1.1
        self.assertEqual(near.decide(x=torch.zeros(8, 8)), "chunks")
        # Without independent rows (no batch), another batch size runs the original forward.
        self.assertEqual(self.k.Program("twice.cu", SPEC).decide(x=torch.zeros(8, 8)), "original")

    def test_a_program_of_any_rows_takes_another_batch_size_itself(self) -> None:
        p = self.k.Program("twice.cu", SPEC, batch=4, any_rows=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for rows in (1, 6, 13):
                self.assertEqual(p.decide(x=torch.zeros(rows, 8)), "program")
            # Not only the batch differs, or no rows at all: the original forward, warned once.
            self.assertEqual(p.decide(x=torch.zeros(6, 9)), "original")
            self.assertEqual(p.decide(x=torch.zeros(0, 8)), "original")
        self.assertEqual(len(seen), 1)
        self.assertIn("got (6, 9)", str(seen[0].message))
        # Another layout is still an error at any rows.
        with self.assertRaises(self.k.TensorMismatchError):
            p.decide(x=torch.zeros(8, 6).t())

    def test_chunks_cover_every_row_and_drop_the_padding(self) -> None:
        p = self.k.Program("twice.cu", SPEC, batch=4)
        x = torch.arange(80, dtype=torch.float32).reshape(10, 8)
        calls = []

        def compiled(x):
            calls.append(tuple(x.shape))
            return x * 2, x.sum(1, keepdim=True)

        twice, sums = p.in_chunks(compiled, x=x)
        self.assertEqual(calls, [(4, 8)] * 3)  # 10 rows: 4 + 4 + 2 padded to 4
        self.assertTrue(torch.equal(twice, x * 2))
        self.assertTrue(torch.equal(sums, x.sum(1, keepdim=True)))
        one = p.in_chunks(lambda x: x + 1, x=x[:3])
        self.assertTrue(torch.equal(one, x[:3] + 1))

    def test_another_dtype_is_an_error_saying_what_to_pass(self) -> None:
        with self.assertRaises(self.k.TensorMismatchError) as e:
            self.program().decide(x=torch.zeros(4, 8, dtype=torch.float16))
        self.assertIn("x is torch.float16", str(e.exception))
        self.assertIn("x.to(torch.float32)", str(e.exception))

    def test_another_layout_is_an_error_saying_what_to_pass(self) -> None:
        with self.assertRaises(self.k.TensorMismatchError) as e:
            self.program().decide(x=torch.zeros(8, 4).t())
        self.assertIn("strides (1, 4)", str(e.exception))
        self.assertIn("x.contiguous()", str(e.exception))

    def test_size_one_dims_may_have_any_stride(self) -> None:
        p = self.k.Program("twice.cu", {"x": ("float32", (1, 8), (8, 1))})
        self.assertEqual(p.decide(x=torch.zeros(8, 1).t()), "program")  # past the layout check

    def test_running_on_cpu_tensors_needs_a_gpu(self) -> None:
        with self.assertRaises(self.k.NeedsGpuError):
            self.program().forward(torch.zeros(4, 8), torch.empty(4, 8))
        with self.assertRaises(self.k.NeedsGpuError):
            self.program().segment(0, torch.zeros(4, 8))

    def test_a_missing_program_says_where_it_looked(self) -> None:
        with self.assertRaises(FileNotFoundError) as e:
            self.k.load_program("gone.cu")
        self.assertIn("stitchcuda_kernels", str(e.exception))

    def test_load_program_is_made_once_per_name_and_inputs(self) -> None:
        self.assertIs(self.k.load_program("twice.cu", SPEC), self.k.load_program("twice.cu", SPEC))

    def test_builds_with_nvcc_for_a_named_arch_and_reuses_the_build(self) -> None:
        library = self.k.build("twice.cu", arch="sm_90", cache=self.cache)
        self.assertTrue(os.path.isfile(library))
        self.assertTrue(library.startswith(self.cache))
        stamp = os.stat(library).st_mtime_ns
        self.assertEqual(self.k.build("twice.cu", arch="sm_90", cache=self.cache), library)
        self.assertEqual(os.stat(library).st_mtime_ns, stamp)
        self.assertEqual([f for f in os.listdir(os.path.dirname(library)) if f.endswith(".so")], [os.path.basename(library)])

    def test_a_build_error_shows_nvcc_output(self) -> None:
        with self.assertRaises(self.k.BuildError) as e:
            self.k.build("broken.cu", arch="sm_90", cache=self.cache)
        self.assertIn("broken.cu", str(e.exception))
        self.assertIn("error", str(e.exception))

    def test_building_for_this_machines_gpu_without_one_says_so(self) -> None:
        with self.assertRaises(self.k.NeedsGpuError) as e:
            self.k.build("twice.cu", cache=self.cache)
        self.assertIn("arch=", str(e.exception))

    def test_without_nvcc_the_build_says_what_to_install(self) -> None:
        saved = self.k.find_nvcc
        self.k.find_nvcc = lambda: None
        try:
            with self.assertRaises(self.k.BuildError) as e:
                self.k.build("twice.cu", arch="sm_90", cache=self.cache)
        finally:
            self.k.find_nvcc = saved
        self.assertIn("CUDA_HOME", str(e.exception))


if __name__ == "__main__":
    unittest.main()
