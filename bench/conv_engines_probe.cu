// The fastest cuDNN legacy-API algorithm against the fastest backend engine (ConvEngines.cuh) on
// KernelBench-sized fp32 convolutions, each timed as a generated program times them (median of 5),
// in exact fp32 (FMA math) and where TF32 is allowed (eager's default for convolutions):
//   nvcc -O2 -std=c++17 -arch=sm_90 -I harness/stitchcuda_harness/include bench/conv_engines_probe.cu -lcudnn -o probe
#define SC_STEP_STATUS 100000
#include "../agents/builtin/cuda/ConvX3.cuh"

#include <vector>

struct Probe {
  const char* name;
  sc_conv_shape s;
};

static float* zeros(const int* dims, int nd) {
  float* p = nullptr;
  const size_t bytes = sizeof(float) * sc_elements(dims, 0, nd);
  cudaMalloc(&p, bytes);
  cudaMemset(p, 0, bytes);
  return p;
}

int main() {
  std::vector<Probe> probes = {
      // level1/64: ConvTranspose1d(128, 128, 3) on [64, 128, 65536]
      {"convT1d 128->128 k3, N64 L65536", {4, {64, 128, 1, 65536}, {128, 128, 1, 3}, {64, 128, 1, 65538},
                                          {0, 0}, {1, 1}, {1, 1}, 1, 1, 1, {}, 0}},
      // level1/78: ConvTranspose2d(32, 32, (3, 7), padding (1, 3)) on [8, 32, 512, 1024]
      {"convT2d 32->32 k3x7, N8 512x1024", {4, {8, 32, 512, 1024}, {32, 32, 3, 7}, {8, 32, 512, 1024},
                                           {1, 3}, {1, 1}, {1, 1}, 1, 1, 1, {}, 0}},
      // a 3x3 convolution of a conv-with-tail problem, NCHW and channels-last
      {"conv2d 64->128 k3, N16 256x256", {4, {16, 64, 256, 256}, {128, 64, 3, 3}, {16, 128, 254, 254},
                                         {0, 0}, {1, 1}, {1, 1}, 1, 0, 1, {}, 0}},
      {"conv2d 64->128 k3, N16 256x256 NHWC", {4, {16, 64, 256, 256}, {128, 64, 3, 3}, {16, 128, 254, 254},
                                              {0, 0}, {1, 1}, {1, 1}, 1, 0, 1, {}, 1}},
  };
  cudnnCreate(&sc_dnn);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  printf("| convolution | math | legacy ms (algo) | backend engine ms | engine / legacy |\n|---|---|---|---|---|\n");
  for (Probe& p : probes)
    for (cudnnMathType_t math : {CUDNN_FMA_MATH, CUDNN_DEFAULT_MATH}) {
      sc_conv_shape& s = p.s;
      s.math[0] = s.math[1] = math;
      float *x = zeros(s.in, s.nd), *w = zeros(s.w, s.nd), *y = zeros(s.out, s.nd);
      sc_conv c;
      c.images = s.in[0];
      float legacy = -1.0f, engine = 3.0e38f;
      bool listed = sc_tensor(&c.in, s.nd, s.in, s.in, s.channels_last) == 0 &&
                    sc_tensor(&c.out, s.nd, s.out, s.out, s.channels_last) == 0 &&
                    cudnnCreateFilterDescriptor(&c.w) == CUDNN_STATUS_SUCCESS &&
                    cudnnSetFilterNdDescriptor(c.w, CUDNN_DATA_FLOAT,
                                               s.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, s.nd,
                                               s.w) == CUDNN_STATUS_SUCCESS &&
                    sc_conv_desc(&c.conv, &s, math) == 0;
      if (listed && !sc_conv_choose(&c, &s, c.conv, x, w, y, &c.algo, &c.workspace, &legacy, stream)) legacy = -1.0f;
      sc_conv_engine* e = sc_conv_engine_choose(&s, x, w, y, &engine, stream);
      printf("| %s | %s | %.3f (%d) | %s%.3f | %.2f |\n", p.name, math == CUDNN_FMA_MATH ? "FMA" : "default (TF32)",
             legacy, c.algo, e ? "" : "none ", e ? engine : 0.0f, e && legacy > 0 ? engine / legacy : 0.0f);
      if (e) sc_conv_engine_release(e);
      sc_conv_release(&c);
      cudaFree(x), cudaFree(w), cudaFree(y);
    }
  return 0;
}
