// Which cuDNN legacy-API forward algorithms run a KernelBench-sized fp32 convolution in each math
// type, with their workspace and time (median of 5), beside eager's: why a TF32 plan can still land
// on a CUDA-core kernel. nvcc -O2 bench/conv_tf32_probe.cu -lcudnn -o probe && ./probe
#include <cudnn.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
  const int n = 64, c = 64, h = 256, w = 256, k = 128, r = 3;
  cudnnHandle_t dnn;
  cudnnCreate(&dnn);
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t f;
  cudnnCreateTensorDescriptor(&x);
  cudnnCreateTensorDescriptor(&y);
  cudnnCreateFilterDescriptor(&f);
  cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w);
  cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c, r, r);
  cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k, h - 2, w - 2);
  float *dx, *dw, *dy;
  void* ws = nullptr;
  cudaMalloc(&dx, sizeof(float) * n * c * h * w);
  cudaMalloc(&dw, sizeof(float) * k * c * r * r);
  cudaMalloc(&dy, sizeof(float) * n * k * (h - 2) * (w - 2));
  cudaMemset(dx, 0, sizeof(float) * n * c * h * w);
  cudaMemset(dw, 0, sizeof(float) * k * c * r * r);
  const cudnnMathType_t maths[] = {CUDNN_FMA_MATH, CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH};
  const char* names[] = {"FMA", "DEFAULT", "TENSOR_OP"};
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int m = 0; m < 3; ++m) {
    cudnnConvolutionDescriptor_t d;
    cudnnCreateConvolutionDescriptor(&d);
    cudnnSetConvolution2dDescriptor(d, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(d, maths[m]);
    for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
      size_t need = 0;
      cudnnStatus_t st = cudnnGetConvolutionForwardWorkspaceSize(dnn, x, f, d, y, (cudnnConvolutionFwdAlgo_t)algo, &need);
      if (st != CUDNN_STATUS_SUCCESS) {
        printf("%-9s algo %d: workspace query %s\n", names[m], algo, cudnnGetErrorString(st));
        continue;
      }
      if (ws) cudaFree(ws);
      ws = nullptr;
      if (need && cudaMalloc(&ws, need) != cudaSuccess) {
        printf("%-9s algo %d: workspace %zu MiB not allocated\n", names[m], algo, need >> 20);
        cudaGetLastError();
        continue;
      }
      const float one = 1.0f, zero = 0.0f;
      std::vector<float> t;
      for (int i = 0; i < 6; ++i) {
        cudaEventRecord(a);
        st = cudnnConvolutionForward(dnn, &one, x, dx, f, dw, d, (cudnnConvolutionFwdAlgo_t)algo, ws, need, &zero, y, dy);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (i) t.push_back(ms);
        if (st != CUDNN_STATUS_SUCCESS) break;
      }
      std::sort(t.begin(), t.end());
      printf("%-9s algo %d: workspace %6zu MiB, %s, median %.3f ms\n", names[m], algo, need >> 20, cudnnGetErrorString(st),
             t.empty() ? -1.0f : t[t.size() / 2]);
    }
  }
  printf("cuDNN %zu\n", cudnnGetVersion());
  return 0;
}
