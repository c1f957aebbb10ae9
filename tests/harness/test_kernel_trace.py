"""The side-stream rule on recorded traces: the candidate's own kernels belong on the caller's
stream; a library's kernels on its own streams pass only when they end before the caller's stream
goes on (the end marker)."""
from __future__ import annotations

import os
import tempfile
import unittest

from stitchcuda_harness.kernel_trace import KernelTrace, own_kernel_names, stream_findings

CALLER = 7


def kernel(name: str, stream: int, start: float, duration: float) -> dict:
    return {"name": name, "stream": stream, "start_us": start, "duration_us": duration}


class StreamFindingsTest(unittest.TestCase):
    def test_everything_on_the_caller_stream_passes(self) -> None:
        trace = KernelTrace([kernel("void fused_0(float*)", CALLER, 10, 5)], CALLER, 20)
        self.assertEqual(stream_findings(trace, {"fused_0"}), [])

    def test_library_streams_joined_before_the_caller_goes_on_pass(self) -> None:
        # cuDNN's RNN: layers on forked streams, joined back before the end marker starts.
        trace = KernelTrace([kernel("void elemWiseRNNcell<float, (cudnnRNNMode_t)3>(float*)", 375, 10, 4),
                             kernel("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", 376, 12, 6)], CALLER, 18.5)
        self.assertEqual(stream_findings(trace, {"fused_0"}), [])

    def test_library_kernel_still_running_at_the_end_marker_is_a_side_stream(self) -> None:
        trace = KernelTrace([kernel("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", 376, 12, 10)], CALLER, 18)
        findings = stream_findings(trace, set())
        self.assertEqual([f.check for f in findings], ["side_stream"])
        self.assertIn("still running", findings[0].message)
        self.assertEqual(findings[0].data["streams"], [376])

    def test_own_kernel_on_another_stream_is_a_side_stream_even_if_it_ended_in_time(self) -> None:
        trace = KernelTrace([kernel("void stitch::chain<float>(float const*, long)", 9, 1, 1)], CALLER, 100)
        findings = stream_findings(trace, {"chain"})
        self.assertEqual([f.check for f in findings], ["side_stream"])
        self.assertIn("own kernels", findings[0].message)

    def test_own_kernel_names_read_from_cuda_and_inline_sources(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            cu, py = os.path.join(d, "k.cu"), os.path.join(d, "k.py")
            with open(cu, "w") as f:
                f.write("__global__ void __launch_bounds__(256) fused_0(float* x) {}\n"
                        "template <int N> __global__ void tiled(float* x) {}\n")
            with open(py, "w") as f:
                f.write('cuda_sources = """__global__ void inline_kernel(float* x) {}"""\n')
            self.assertEqual(own_kernel_names((cu, py)), {"fused_0", "tiled", "inline_kernel"})


if __name__ == "__main__":
    unittest.main()
