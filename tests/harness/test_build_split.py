"""A marked candidate builds as several translation units (build_split.py): the kernels shared out,
each launcher reached from the main unit, diagnostics on the candidate's own lines, and a file the
split cannot take built whole."""
from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
import unittest

from tests.harness import REPO  # noqa: F401  (puts the harness on sys.path)
from stitchcuda_harness.build_split import MIN_KERNELS_PER_PART, split_units
from stitchcuda_harness.nvcc_build import Builder, find_nvcc


def marked_candidate(kernels: int, broken: int = -1) -> str:
    """The coder's layout: prelude, shared-end, kernel blocks, a library-free host entry."""
    out = ['#include "stitch_abi.h"\n', "__device__ __forceinline__ float twice(float x) { return 2.0f * x; }\n",
           "// stitch:shared-end\n", "static int sc_host_only = 0;\n"]
    for k in range(kernels):
        body = "undefined_name" if k == broken else f"twice(p[0]) + {k}.0f"
        out += [f"// stitch:kernel launch_k{k}\n",
                f"__global__ void k{k}_kernel(float* p) {{ p[0] = {body}; }}\n",
                f"static int launch_k{k}(const StitchTensor* t, int64_t rows, cudaStream_t stream) {{\n",
                f"  (void)rows; k{k}_kernel<<<1, 1, 0, stream>>>((float*)t[0].data); return (int)cudaGetLastError();\n",
                "}\n", "// stitch:kernel-end\n"]
    out.append('extern "C" int stitch_forward(const StitchTensor* t, int32_t n, cudaStream_t stream) {\n'
               "  (void)n; int status = sc_host_only;\n")
    out += [f"  if ((status = launch_k{k}(t, 0, stream)) != 0) return status;\n" for k in range(kernels)]
    out.append("  return status;\n}\n")
    return "".join(out)


class SplitTextTest(unittest.TestCase):
    def test_kernels_shared_out_and_launchers_declared(self) -> None:
        split = split_units(marked_candidate(4 * MIN_KERNELS_PER_PART), "/c/candidate.cu", 3)
        assert split is not None
        self.assertEqual(len(split.parts), 3)
        for k in range(4 * MIN_KERNELS_PER_PART):
            self.assertIn(f'__attribute__((visibility("hidden"))) int launch_k{k}(const StitchTensor* t, int64_t rows, '
                          "cudaStream_t stream);", split.main)
            self.assertNotIn(f"k{k}_kernel(float", split.main)
            homes = [p for p in split.parts if f"int launch_k{k}(const StitchTensor* t" in p]
            self.assertEqual(len(homes), 1, k)
            self.assertNotIn(f"static int launch_k{k}", homes[0])
        self.assertTrue(all("twice(float x)" in p and "sc_host_only" not in p for p in split.parts))

    def test_a_block_of_several_launchers_moves_whole(self) -> None:
        """Repeats of one kernel share its block (agents/builtin/emit/SharedKernels.h): every launcher
        of it is made external and declared in the main unit."""
        text = marked_candidate(2 * MIN_KERNELS_PER_PART).replace(
            "// stitch:kernel launch_k0\n", "// stitch:kernel launch_k0 launch_r0\n").replace(
            "// stitch:kernel-end\n", "static int launch_r0(const StitchTensor* t, int64_t rows, cudaStream_t stream) {\n"
            "  return launch_k0(t, rows, stream);\n}\n// stitch:kernel-end\n", 1)
        split = split_units(text, "/c/candidate.cu", 2)
        assert split is not None
        home = [p for p in split.parts if "k0_kernel" in p]
        self.assertEqual(len(home), 1)
        for launcher in ("launch_k0", "launch_r0"):
            self.assertIn(f'__attribute__((visibility("hidden"))) int {launcher}(const StitchTensor* t', home[0])
            self.assertIn(f'__attribute__((visibility("hidden"))) int {launcher}(const StitchTensor* t, int64_t rows, '
                          "cudaStream_t stream);", split.main)
        self.assertIsNone(split_units(text.replace("static int launch_r0(", "static int other("), "/c/candidate.cu", 2))

    def test_too_few_kernels_or_no_markers_build_whole(self) -> None:
        self.assertIsNone(split_units(marked_candidate(MIN_KERNELS_PER_PART - 1), "/c/candidate.cu", 8))
        self.assertIsNone(split_units("__global__ void k(float* p) { p[0] = 1.0f; }\n", "/c/candidate.cu", 8))

    def test_line_directives_point_at_the_candidate(self) -> None:
        text = marked_candidate(2 * MIN_KERNELS_PER_PART)
        split = split_units(text, "/c/candidate.cu", 2)
        assert split is not None
        kernel_line = text.splitlines().index("__global__ void k3_kernel(float* p) { p[0] = twice(p[0]) + 3.0f; }") + 1
        part = next(p for p in split.parts if "k3_kernel" in p).splitlines()
        at = part.index("__global__ void k3_kernel(float* p) { p[0] = twice(p[0]) + 3.0f; }")
        self.assertEqual(part[at - 1], f'#line {kernel_line} "/c/candidate.cu"')


@unittest.skipIf(find_nvcc() is None, "nvcc not installed")
class SplitBuildTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="stitch-split-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def write(self, text: str) -> str:
        path = os.path.join(self.dir, "candidate.cu")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_units_link_into_one_library_with_the_entry_point(self) -> None:
        result = Builder(os.path.join(self.dir, "cache"), "sm_90").build(self.write(marked_candidate(2 * MIN_KERNELS_PER_PART)))
        self.assertTrue(result.ok, result.log)
        if os.cpu_count() and os.cpu_count() > 1:
            self.assertGreater(result.units, 1)
        lib = ctypes.CDLL(result.library)
        self.assertTrue(hasattr(lib, "stitch_forward"))
        self.assertFalse(hasattr(lib, "launch_k0"))  # hidden: never bound to another library's launch_k0

    def test_an_error_in_a_kernel_names_the_candidates_line(self) -> None:
        text = marked_candidate(2 * MIN_KERNELS_PER_PART, broken=5)
        path = self.write(text)
        result = Builder(os.path.join(self.dir, "cache"), "sm_90").build(path)
        self.assertFalse(result.ok)
        line = next(i for i, l in enumerate(text.splitlines(), 1) if "undefined_name" in l)
        errors = [d for d in result.diagnostics if d.severity == "error"]
        self.assertEqual((errors[0].file, errors[0].line, errors[0].in_candidate), (path, line, True), result.log)


if __name__ == "__main__":
    unittest.main()
