// Host code for library calls (design §8): a cuBLASLt matmul with its epilogue, a cuDNN
// (transposed) convolution, or a cuDNN RNN, as a launcher with the same signature as a generated kernel's. The
// handles and one workspace are made once per loaded candidate; on its first call each launcher
// picks its algorithm by measurement (cuBLASLt's configurations and every cuDNN algorithm timed on
// the real buffers, against a direct kernel or a pointwise convolution's GEMM where one applies),
// so no choice is made inside a captured or timed call. Each call computes in the precision its
// LibraryCall says (eager's for that operator, design §7): a GEMM's compute type and a
// convolution's cuDNN math types are written into its shape, so TF32 appears in a candidate's
// source only where a call uses it.
#pragma once

#include "agents/builtin/emit/CudaEmitter.h"
#include "agents/builtin/lower/LibraryCall.h"

#include <map>
#include <optional>
#include <string>

namespace stitch::agents::builtin {

// The headers, handles, workspace and the shared prepare/run helpers; empty when no library is used.
// `rnn`: some step is a cuDNN RNN (RnnCall).
// `gemm` also where a pointwise convolution (pointwiseGemm) measures cuBLASLt against cuDNN.
// `tensorCores`: the job allows TF32, so each call also measures its fp32-accurate 3xTF32 form
// (three TF32 tensor-core calls on operands split into hi + lo) and keeps it where faster.
// `directDeconv`: some transposed convolution has a direct kernel (directDeconvTile), whose
// templates are then included.
std::string emitLibraryPrelude(bool gemm, bool conv, bool rnn, bool directDeconv, bool tensorCores);

// How many cuDNN calls a convolution's groups take: 1 (cuDNN groups them itself) or one per group
// (1 < groups < channels; see sc_conv_shape in the generated code for why).
int groupCalls(const ConvCall& c);

// The launcher `name` of plan step `step` (its index in Plan::kernels): a library failure returns
// that step with its status (libraryFailureStep).
EmittedKernel emitLibraryCall(const LibraryCall& call, const std::string& name, std::size_t step,
                              const std::map<std::string, int>& slots);

// The step-tagged status of a library call that failed in a generated program (the generated
// sc_step_status): `status` is 100000 x (step + 1) plus a cuBLASLt (10000 + s) or cuDNN (20000 + s)
// status. The step's index, or nullopt for any other status.
inline constexpr int kStepStatus = 100000;
std::optional<std::size_t> libraryFailureStep(long long status);

}  // namespace stitch::agents::builtin
