"""stitch_forward's status codes as the harness names them (abi.py)."""
from __future__ import annotations

import unittest

from stitchcuda_harness.abi import StitchKernelError, status_name


class StatusNameTest(unittest.TestCase):
    def test_library_statuses_name_their_library(self) -> None:
        self.assertEqual(status_name(10000 + 7), "cuBLASLt status 7")   # CUBLAS_STATUS_INVALID_VALUE
        self.assertEqual(status_name(20000 + 9), "cuDNN status 9")      # CUDNN_STATUS_NOT_SUPPORTED (legacy value)

    def test_a_library_step_is_named_with_its_status(self) -> None:
        self.assertEqual(status_name(4 * 100000 + 20000 + 3000), "step k3: cuDNN status 3000")
        self.assertEqual(status_name(100000 + 10000 + 15), "step k0: cuBLASLt status 15")

    def test_cuda_errors_keep_their_names(self) -> None:
        self.assertEqual(status_name(700), "cudaErrorIllegalAddress")
        self.assertEqual(status_name(1), "cudaError 1")

    def test_the_error_carries_the_code(self) -> None:
        err = StitchKernelError(20003)
        self.assertEqual(err.cuda_error_code, 20003)
        self.assertIn("cuDNN status 3", str(err))


if __name__ == "__main__":
    unittest.main()
