// StitchCUDA fast-path C ABI (protocol/HARNESS.md, "Candidate ABI"). A candidate's .cu exports
// stitch_forward; its thin Python ModelNew calls it once per forward through ctypes with raw
// device pointers and the current stream. No PyTorch headers: the build stays a plain nvcc -shared.
#pragma once
#include <stdint.h>
#include <cuda_runtime.h>

#define STITCH_MAX_DIMS 8

// dtype codes (stitchcuda_harness.abi.DTYPE_CODES)
enum StitchDType { STITCH_F32 = 0, STITCH_F16 = 1, STITCH_BF16 = 2, STITCH_F64 = 3,
                   STITCH_I32 = 4, STITCH_I64 = 5, STITCH_U8 = 6, STITCH_BOOL = 7 };

typedef struct StitchTensor {
  void* data;                        // device pointer (storage offset already applied)
  int32_t dtype;                     // StitchDType
  int32_t ndim;
  int64_t sizes[STITCH_MAX_DIMS];
  int64_t strides[STITCH_MAX_DIMS];  // in elements
} StitchTensor;

#ifdef __cplusplus
extern "C" {
#endif
// Launch everything for one forward on `stream`. `tensors` holds the inputs, parameters and
// preallocated outputs in the order the candidate's ModelNew documents. Returns 0 or a
// cudaError_t value (e.g. cudaGetLastError() after the launches); never synchronizes the device.
int stitch_forward(const StitchTensor* tensors, int32_t n_tensors, cudaStream_t stream);
// A partial candidate's compiled segment `segment` (optional export): the forward runs the
// segments in order with the operators it leaves in PyTorch between them. Same contract as
// stitch_forward, for that segment's tensors.
int stitch_segment(int32_t segment, const StitchTensor* tensors, int32_t n_tensors, cudaStream_t stream);
#ifdef __cplusplus
}
#endif

// Convenience for candidates: return the launch error, if any, as the ABI's status.
#define STITCH_RETURN_LAUNCH_STATUS() return (int)cudaGetLastError()
