// The compute floor puts each library call's math on the units it runs on, against the ceilings
// measured on the H200 (fp32 51.25, TF32 409.03 TFLOP/s): a TF32 convolution is bound by the
// tensor cores, not the fp32 cores that made its "floor reached" 211-252%.
#include "Fixtures.h"

#include "profiling/ComputeFloor.h"

#include <gtest/gtest.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;

namespace {

constexpr double kFp32 = 51.2537013029501e12, kTf32 = 409.0298891027257e12;

}  // namespace

TEST(ComputeFloor, ExactFp32MathIsBoundByTheFp32Cores) {
  auto f = computeFloor({{2e9}}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->seconds, 2e9 / kFp32);
  EXPECT_EQ(f->basis, "2.0 GFLOP at 51.3 TFLOP/s FP32");
}

TEST(ComputeFloor, Tf32MathIsBoundByTheTensorCores) {
  LibraryMath conv{2e9, true};
  auto f = computeFloor({conv}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->seconds, 2e9 / kTf32);
  EXPECT_EQ(f->basis, "2.0 GFLOP at 409.0 TFLOP/s TF32 tensor cores");
  // A TF32 convolution that ran 2.5 times faster than the fp32 floor is at a third of its own.
  const double measured = 2e9 / kFp32 / 2.5;
  EXPECT_LT(f->seconds / measured, 0.35);
}

TEST(ComputeFloor, ThreeTf32PassesCountThriceOnTheTensorCores) {
  LibraryMath gemm{2e9, false, true};
  auto f = computeFloor({gemm}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->seconds, 3 * 2e9 / kTf32);  // under the fp32 cores' 2e9 / kFp32
  EXPECT_EQ(f->basis, "6.0 GFLOP at 409.0 TFLOP/s TF32 tensor cores (6.0 of them 3xTF32's three passes)");
}

TEST(ComputeFloor, CallsRunOneAfterAnother) {
  auto f = computeFloor({{1e9, true}, {1e9}, {0}}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->seconds, 1e9 / kTf32 + 1e9 / kFp32);
  EXPECT_EQ(f->basis, "1.0 GFLOP at 409.0 TFLOP/s TF32 tensor cores + 1.0 GFLOP at 51.3 TFLOP/s FP32");
  EXPECT_FALSE(computeFloor({}, recordedCeilings()));
}

TEST(ComputeFloor, WinogradsFewerProductsBoundAnExactFp32Convolution) {
  LibraryMath conv{9e9, false, false, 1e9};
  EXPECT_DOUBLE_EQ(computeFloor({conv}, recordedCeilings())->seconds, 1e9 / kFp32);
}

TEST(ComputeFloor, WithoutAMeasuredTf32CeilingTheDatasheetPeakBounds) {
  Ceilings c = recordedCeilings();
  c.tf32Tflops = 0;  // a cache written before the TF32 GEMM was measured
  EXPECT_EQ(tf32Ceiling(c).tflops, 494.7);
  EXPECT_FALSE(tf32Ceiling(c).measured);
  c.tf32Tflops = c.fp32Tflops;  // measured with TF32 off: the fp32 units again
  EXPECT_EQ(tf32Ceiling(c).tflops, 494.7);
  auto f = computeFloor({{2e9, true}}, c);
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->seconds, 2e9 / 494.7e12);
  EXPECT_EQ(f->basis, "2.0 GFLOP at 494.7 TFLOP/s TF32 tensor cores (datasheet peak)");
  c.gpu = "NVIDIA H100 PCIe";
  EXPECT_EQ(tf32Ceiling(c).tflops, 378.0);
  c.gpu = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(tf32Ceiling(c).tflops, 156.0);
}

TEST(ComputeFloor, Tf32MathOfAnUnknownGpuIsLeftOut) {
  Ceilings c = recordedCeilings();
  c.tf32Tflops = 0;
  c.gpu = "Some GPU";
  EXPECT_FALSE(computeFloor({{2e9, true}}, c));
  auto f = computeFloor({{2e9, true}, {1e9}}, c);
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->seconds, 1e9 / kFp32);
  EXPECT_EQ(f->basis, "1.0 GFLOP at 51.3 TFLOP/s FP32; 2.0 GFLOP of TF32 math left out (no TF32 ceiling for Some GPU)");
}
