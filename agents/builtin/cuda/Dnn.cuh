// The cuDNN handle and its status check, shared by convolutions and RNNs.
#pragma once
#include "LibraryCommon.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

#include <cudnn.h>

#define SC_DNN(call)                                                                  \
  do {                                                                                \
    cudnnStatus_t s_ = (call);                                                        \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "cuDNN: %s failed: %s\n", #call, cudnnGetErrorString(s_));      \
      return 20000 + (int)s_;                                                         \
    }                                                                                 \
  } while (0)

static cudnnHandle_t sc_dnn = nullptr;
