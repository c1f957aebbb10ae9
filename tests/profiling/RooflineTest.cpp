// Roofline classification of the recorded kernels against the ceilings measured on the same
// H200, the fallback to ncu's % of peak, and the per-GPU cache of the ceilings.
#include "Fixtures.h"

#include "profiling/Roofline.h"
#include "profiling/RooflineCache.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;
namespace fs = std::filesystem;

TEST(Roofline, MemoryBoundKernelIsNearTheCopyCeiling) {
  auto p = classify(ncuFixture("ncu_memory_bound.csv")[0], recordedCeilings());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bound, Bound::Memory);
  // 85 MB of DRAM traffic in 23.8 µs against a measured 4243 GB/s copy.
  EXPECT_NEAR(p->achievedFraction, (67117056.0 + 17974528.0) / 23.776e-6 / 4242.589976640597e9, 1e-9);
  EXPECT_GT(p->achievedFraction, 0.8);
  EXPECT_LT(p->computeFraction, 0.4);
  EXPECT_NE(p->basis.find("measured copy bandwidth"), std::string::npos);
}

TEST(Roofline, SgemmIsComputeBoundAtTheMeasuredSgemmCeiling) {
  auto p = classify(ncuFixture("ncu_compute_bound.csv")[0], recordedCeilings());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bound, Bound::Compute);
  EXPECT_NEAR(p->achievedFraction, 1.0, 0.1);  // the ceiling is this very kernel's kind of work
  EXPECT_LT(p->memoryFraction, 0.1);
}

TEST(Roofline, TinySoftmaxIsLatencyBound) {
  auto ks = ncuFixture("ncu_small_convnet.csv");
  auto p = classify(ks.back(), recordedCeilings());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bound, Bound::Latency);
  EXPECT_LT(p->achievedFraction, kLatencyBoundBelow);
}

TEST(Roofline, WithoutCeilingsNcusPercentOfPeakDecides) {
  KernelMetrics k;
  k.dramThroughputPct = 90;
  k.smThroughputPct = 20;
  auto p = classify(k, std::nullopt);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bound, Bound::Memory);
  EXPECT_DOUBLE_EQ(p->achievedFraction, 0.9);
  EXPECT_NE(p->basis.find("% of peak"), std::string::npos);
  k.dramThroughputPct = 10;
  k.smThroughputPct = 70;
  EXPECT_EQ(classify(k, std::nullopt)->bound, Bound::Compute);
  EXPECT_FALSE(classify(KernelMetrics{}, std::nullopt));
}

TEST(Roofline, TensorPipeCountsAsCompute) {
  KernelMetrics k;
  k.durationUs = 10;
  k.dramBytes = 1e6;  // 100 GB/s: nothing
  k.tensorPipePct = 85;
  auto p = classify(k, recordedCeilings());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bound, Bound::Compute);
  EXPECT_DOUBLE_EQ(p->achievedFraction, 0.85);
}

TEST(Roofline, CeilingsJsonIsValidated) {
  EXPECT_FALSE(ceilingsFromJson(nlohmann::json{{"gpu", "x"}}).ok());
  EXPECT_FALSE(ceilingsFromJson(nlohmann::json{{"gpu", "x"}, {"copyGBps", 0}, {"fp32Tflops", 1}}).ok());
  auto c = recordedCeilings();
  EXPECT_EQ(c.gpu, "NVIDIA H200");
  EXPECT_EQ(c.multiprocessors, 132);
  auto again = ceilingsFromJson(ceilingsToJson(c));
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(again.value().bf16Tflops, c.bf16Tflops);
}

TEST(RooflineCache, MeasuresOncePerGpuThenReadsTheFile) {
  fs::path dir = fs::temp_directory_path() / ("stitch-roofline-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  RooflineCache cache(dir);
  EXPECT_FALSE(cache.load("NVIDIA H200"));
  int measured = 0;
  auto measure = [&]() -> ProfileResult<nlohmann::json> {
    ++measured;
    return jsonFixture("ceilings.json");
  };
  auto first = cache.getOrMeasure("NVIDIA H200", measure);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = cache.getOrMeasure("NVIDIA H200", measure);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(measured, 1);
  EXPECT_DOUBLE_EQ(second.value().copyGBps, first.value().copyGBps);
  EXPECT_EQ(cache.fileFor("NVIDIA H200").filename(), "NVIDIA_H200.json");
  EXPECT_TRUE(fs::exists(cache.fileFor("NVIDIA H200")));
  // Another GPU is measured separately; a measurement of the wrong GPU is refused.
  auto wrong = cache.getOrMeasure("NVIDIA H100 80GB HBM3", measure);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, "ceilings_mismatch");
  auto failing = cache.getOrMeasure("NVIDIA A100", [] { return ProfileResult<nlohmann::json>(ProfileError{"deadline_exceeded", "worker hung"}); });
  ASSERT_FALSE(failing.ok());
  EXPECT_EQ(failing.error().code, "deadline_exceeded");
  fs::remove_all(dir);
}
