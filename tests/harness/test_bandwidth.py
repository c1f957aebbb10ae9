"""The roofline's memory ceiling (bandwidth.py) where CI can check it, without a GPU: our stream
probe builds with the real nvcc and exports its entry, and a CPU device has no ceiling."""
from __future__ import annotations

import ctypes
import shutil
import tempfile
import unittest

import torch

from stitchcuda_harness.bandwidth import PROBE_SOURCE, measure_bandwidth
from stitchcuda_harness.nvcc_build import Builder, find_nvcc


class BandwidthTest(unittest.TestCase):
    def test_a_cpu_has_no_memory_ceiling(self) -> None:
        b = measure_bandwidth(torch.device("cpu"))
        self.assertEqual((b.gbps, b.stream), (0.0, "no CUDA device"))

    @unittest.skipIf(find_nvcc() is None, "nvcc not installed")
    def test_the_stream_probe_builds_and_exports_its_entry(self) -> None:
        cache = tempfile.mkdtemp(prefix="stitch-probe-")
        self.addCleanup(shutil.rmtree, cache, True)
        result = Builder(cache, "sm_90").build(PROBE_SOURCE)
        self.assertTrue(result.ok, result.log)
        self.assertTrue(hasattr(ctypes.CDLL(result.library), "stitch_stream"))


if __name__ == "__main__":
    unittest.main()
