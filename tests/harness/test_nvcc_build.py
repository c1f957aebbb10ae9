"""Fast-path builds with the real nvcc (CI has the CUDA toolkit, no GPU): a library is built and
cached by content hash, builds run in parallel, and compiler errors point at the candidate."""
from __future__ import annotations

import os
import shutil
import tempfile
import unittest

from tests.harness import REPO
from stitchcuda_harness.nvcc_build import Builder, find_nvcc, parse_diagnostics

HONEST = os.path.join(REPO, "tests", "harness", "honest")


@unittest.skipIf(find_nvcc() is None, "nvcc not installed")
class NvccBuildTest(unittest.TestCase):
    def setUp(self) -> None:
        self.cache = tempfile.mkdtemp(prefix="stitch-build-")
        self.addCleanup(shutil.rmtree, self.cache, True)
        self.builder = Builder(self.cache, "sm_90")

    def test_build_then_cache_hit(self) -> None:
        src = os.path.join(HONEST, "host_elementwise", "candidate.cu")
        first = self.builder.build(src)
        self.assertTrue(first.ok, first.log)
        self.assertFalse(first.cached)
        self.assertTrue(os.path.isfile(first.library))
        second = self.builder.build(src)
        self.assertEqual((second.cached, second.library), (True, first.library))

    def test_parallel_builds(self) -> None:
        sources = [os.path.join(HONEST, n, "candidate.cu") for n in ("elementwise_chain", "mlp", "host_elementwise")]
        results = self.builder.build_many(sources, jobs=3)
        self.assertTrue(all(r.ok for r in results), [r.log for r in results])
        self.assertEqual(len({r.library for r in results}), 3)

    def test_background_build_is_collected_not_repeated(self) -> None:
        src = os.path.join(HONEST, "host_elementwise", "candidate.cu")
        started = self.builder.start(src)
        # Another builder in the same worker (the verifier's) joins the running build.
        joined = Builder(self.cache, "sm_90").start(src)
        self.assertIs(joined, started)
        result = joined.result()
        self.assertTrue(result.ok, result.log)
        self.assertFalse(result.cached)
        self.assertGreater(result.seconds, 0.0)
        self.assertEqual(os.listdir(os.path.dirname(result.library)), ["libcandidate.so"])  # no .tmp or .log left
        self.assertTrue(self.builder.build(src).cached)

    def test_background_build_failure_is_its_result(self) -> None:
        d = tempfile.mkdtemp(dir=self.cache)
        src = os.path.join(d, "bad.cu")
        with open(src, "w") as f:
            f.write("__global__ void k(float* p) {\n  p[0] = undefined_name;\n}\n")
        r = self.builder.start(src).result()
        self.assertFalse(r.ok)
        self.assertIn("undefined_name", r.log)
        self.assertEqual([e.line for e in r.diagnostics if e.severity == "error"][:1], [2])

    def test_one_architecture_and_no_ptx(self) -> None:
        cmd = Builder(self.cache, "sm_90a").command("a.cu", "a.so", "")
        self.assertIn("arch=compute_90a,code=sm_90a", cmd)
        self.assertFalse([c for c in cmd if c.startswith("-arch")])

    def test_compile_error_maps_to_candidate_line(self) -> None:
        d = tempfile.mkdtemp(dir=self.cache)
        src = os.path.join(d, "bad.cu")
        with open(src, "w") as f:
            f.write('#include "stitch_abi.h"\n\n__global__ void k(float* p) {\n  p[0] = undefined_name;\n}\n')
        r = self.builder.build(src)
        self.assertFalse(r.ok)
        errors = [d for d in r.diagnostics if d.severity == "error"]
        self.assertTrue(errors, r.log)
        self.assertEqual((errors[0].file, errors[0].line, errors[0].in_candidate), (src, 4, True))
        self.assertIn("undefined_name", errors[0].message)

    def test_host_compiler_diagnostic_format(self) -> None:
        d = parse_diagnostics("/x/c.cu:12:5: error: expected ';'\n", "/x/c.cu")
        self.assertEqual((d[0].line, d[0].column, d[0].in_candidate), (12, 5, True))


if __name__ == "__main__":
    unittest.main()
