// Pins how the built-in refine step acts on the Verifier's one diagnosis: which variant it writes
// next, and when it stops because launch variants cannot help.
#include "FixtureGraphs.h"

#include "agents/builtin/BuiltinBrain.h"
#include "agents/builtin/emit/LibraryEmitter.h"

#include <gtest/gtest.h>

#include <fstream>

namespace stitch::agents::builtin {
namespace {

class Refine : public ::testing::Test {
protected:
  void SetUp() override { planTask("level2", "12_elementwise_chain", {}); }

  void planTask(const std::string& level, const std::string& task, std::vector<std::string> allowPrecision,
                std::optional<EagerPrecision> eager = std::nullopt, const std::string& precision = "eager",
                const std::string& layout = "auto", bool replan = false) {
    std::ifstream in(testing::sourceDir() / "tests/fixtures/graphs" / (task + ".json"));
    BaselineFacts facts;
    facts.cuda = true;
    facts.graph = protocol::json::parse(in);
    facts.precision = eager;
    facts.lineTimesUs = lineTimes;
    JobRequest request;
    request.jobId = "j";
    request.taskFile = testing::sourceDir() / (level.empty() ? "tests/fixtures/tasks" : "bench/tasks/" + level) / (task + ".py");
    request.options.allowPrecision = std::move(allowPrecision);
    request.options.precision = precision;
    request.options.layout = layout;
    ASSERT_TRUE(brain.plan(facts, request, replan).generatable);
    dir = std::filesystem::temp_directory_path() / ("stitch-refine-" + std::to_string(::getpid()));
  }

  std::string lastCuda() const {
    std::ifstream in(dir / std::to_string(n - 1) / "candidate.cu");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string lastPython() const {
    std::ifstream in(dir / std::to_string(n - 1) / "model_new.py");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // The variant of the next draft, or "" when the search ended.
  std::string next(const std::optional<loop::Feedback>& last) {
    std::string error;
    draft = brain.next(last, dir / std::to_string(n++), error);
    EXPECT_EQ(error, "");
    return draft ? draft->variant : "";
  }

  static loop::Feedback verified(const std::string& category) {
    loop::Feedback f;
    f.built = f.passed = true;
    f.verifier = profiling::VerifierFeedback{"optimize", category, "k0_kernel", "", "", {}, {}, {}};
    return f;
  }

  // A candidate that failed at run time with `status` from stitch_forward, as the verifier words it.
  static loop::Feedback failedWith(long long status) {
    loop::Feedback f;
    f.built = true;
    f.failedChecks = {"candidate_runtime_error"};
    f.diagnosis = "candidate_runtime_error: ModelNew.forward (trial 0): StitchKernelError: stitch_forward returned " +
                  std::to_string(status) + " (...) Check the launch configuration.";
    return f;
  }

  static loop::Feedback timed(double ms) {
    loop::Feedback f;
    f.built = f.passed = true;
    f.medianMs = ms;
    return f;
  }

  // The technique of the plan's convolution step in the last draft's plan.
  std::string convTechnique() const {
    if (!draft || !draft->plan) return "";
    for (const auto& t : draft->plan->plan.tasks)
      if (t.title.rfind("cuDNN: ", 0) == 0) return t.technique;
    return "";
  }

  std::map<int, double> lineTimes;  // the reference's profile, per source line
  BuiltinBrain brain;
  std::optional<loop::Draft> draft;
  std::filesystem::path dir;
  int n = 0;
};

TEST_F(Refine, WithoutADiagnosisVariantsComeInTheirListedOrder) {
  EXPECT_EQ(next(std::nullopt), BuiltinBrain::variants()[0].name());
  loop::Feedback plain;
  plain.built = plain.passed = true;
  EXPECT_EQ(next(plain), BuiltinBrain::variants()[1].name());
}

TEST_F(Refine, AtTheBandwidthCeilingTheSearchEnds) {
  ASSERT_NE(next(std::nullopt), "");
  EXPECT_EQ(next(verified("memory_bound_at_ceiling")), "");
  EXPECT_EQ(next(verified("memory_floor_reached")), "");
  auto asFast = verified("memory_bound_at_ceiling");
  asFast.speedupEager = 1.0;
  EXPECT_EQ(next(asFast), "");
}

TEST_F(Refine, AtTheCeilingButSlowerThanEagerMoreBytesPerThreadComeNext) {
  ASSERT_NE(next(std::nullopt), "");
  auto slower = verified("memory_bound_at_ceiling");
  slower.speedupEager = 0.9;
  EXPECT_EQ(next(slower), (Variant{256, 4, 4}.name()));
}

TEST_F(Refine, BelowTheFloorMoreBytesPerThreadComeFirst) {
  ASSERT_NE(next(std::nullopt), "");
  EXPECT_EQ(next(verified("below_memory_floor")), (Variant{256, 4, 4}.name()));
  EXPECT_EQ(next(verified("stall_long_scoreboard")), (Variant{128, 4, 2}.name()));
}

TEST_F(Refine, TooSmallAGridGetsTheMostBlocksAndOccupancyTheLargestBlocks) {
  ASSERT_NE(next(std::nullopt), "");
  EXPECT_EQ(next(verified("grid_too_small")), (Variant{256, 1, 1}.name()));
  EXPECT_EQ(next(verified("occupancy_limited")), (Variant{1024, 4, 1}.name()));
}

TEST_F(Refine, AWrongAnswerEndsTheSearchAndAnotherFailureTriesScalarAccesses) {
  ASSERT_NE(next(std::nullopt), "");
  loop::Feedback misaligned;
  misaligned.failedChecks = {"candidate_runtime_error"};
  EXPECT_EQ(next(misaligned), (Variant{256, 1, 1}.name()));
  loop::Feedback wrong;
  wrong.failedChecks = {"output_mismatch"};
  EXPECT_EQ(next(wrong), "");
}

// A job that allows TF32 whose candidate (library calls free to take their 3xTF32 form) gives a
// wrong answer gets the same candidate in fp32 once; a wrong answer in fp32 then ends the search.
TEST_F(Refine, AWrongAnswerWithTheTf32FormAllowedIsRetriedInFp32) {
  planTask("level1", "54_matmul_square", {"tf32"});
  const std::string first = next(std::nullopt);
  ASSERT_NE(first, "");
  EXPECT_NE(lastCuda().find("struct sc_gemm_x3 {"), std::string::npos);
  loop::Feedback wrong;
  wrong.failedChecks = {"output_mismatch"};
  EXPECT_EQ(next(wrong), first);
  EXPECT_EQ(lastCuda().find("struct sc_gemm_x3 {"), std::string::npos);
  EXPECT_NE(lastCuda().find("fp32 (the 3xTF32 form missed the tolerance)"), std::string::npos);
  EXPECT_EQ(next(wrong), "");
}

// Eager's precision, as the harness reported it: the convolution may use TF32 tensor cores. A wrong
// answer gets the same candidate in exact fp32 once (another TF32 algorithm than eager's rounds
// otherwise; exact fp32 is closer to the truth than either); then the search ends.
TEST_F(Refine, AConvolutionRunsInEagersTf32AndAWrongAnswerIsRetriedInExactFp32) {
  planTask("level1", "62_conv2d_3x3", {}, EagerPrecision{true, false});
  const std::string first = next(std::nullopt);
  ASSERT_NE(first, "");
  EXPECT_NE(lastCuda().find("{CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH}};"), std::string::npos);
  loop::Feedback wrong;
  wrong.failedChecks = {"output_mismatch"};
  EXPECT_EQ(next(wrong), first);
  EXPECT_NE(lastCuda().find("{CUDNN_FMA_MATH, CUDNN_FMA_MATH}};"), std::string::npos);
  EXPECT_EQ(lastCuda().find("CUDNN_DEFAULT_MATH"), std::string::npos);
  EXPECT_NE(lastCuda().find("fp32 (eager's TF32 form missed the tolerance)"), std::string::npos);
  EXPECT_EQ(next(wrong), "");
}

// The loop's replan after failures in a row is made in exact fp32, still fused, where a candidate
// missed the tolerance in eager's TF32: another fusion in TF32 rounds no closer to eager's.
TEST_F(Refine, AReplanAfterTf32MissedTheToleranceIsInExactFp32) {
  planTask("level1", "62_conv2d_3x3", {}, EagerPrecision{true, false});
  ASSERT_NE(next(std::nullopt), "");
  loop::Feedback wrong;
  wrong.failedChecks = {"output_mismatch"};
  ASSERT_NE(next(wrong), "");
  planTask("level1", "62_conv2d_3x3", {}, EagerPrecision{true, false}, "eager", "auto", true);
  ASSERT_NE(next(std::nullopt), "");
  EXPECT_EQ(lastCuda().find("CUDNN_DEFAULT_MATH"), std::string::npos);
  EXPECT_NE(lastCuda().find("fp32 (eager's TF32 form missed the tolerance)"), std::string::npos);
  EXPECT_EQ(lastCuda().find("unfused"), std::string::npos);
  // A first plan starts over in eager's precision.
  planTask("level1", "62_conv2d_3x3", {}, EagerPrecision{true, false});
  ASSERT_NE(next(std::nullopt), "");
  EXPECT_NE(lastCuda().find("CUDNN_DEFAULT_MATH"), std::string::npos);
}

// TF32 the verifier did not excuse (it saw the reference run those ops otherwise) is retried in
// exact fp32 too.
TEST_F(Refine, Tf32TheVerifierDidNotExcuseIsRetriedInExactFp32) {
  planTask("level1", "54_matmul_square", {}, EagerPrecision{false, true});
  const std::string first = next(std::nullopt);
  ASSERT_NE(first, "");
  EXPECT_NE(lastCuda().find("CUBLAS_COMPUTE_32F_FAST_TF32};"), std::string::npos);
  loop::Feedback flagged;
  flagged.failedChecks = {"precision_downgrade"};
  EXPECT_EQ(next(flagged), first);
  EXPECT_EQ(lastCuda().find("FAST_TF32"), std::string::npos);
  EXPECT_NE(lastCuda().find("fp32 (the verifier did not excuse its TF32)"), std::string::npos);
}

// Running statistics that moved beyond the tolerance after TF32 convolutions (training-mode batch
// norm) are retried in exact fp32 too; without TF32 in the plan a buffer mismatch is not precision.
TEST_F(Refine, RunningStatisticsMissedAfterTf32AreRetriedInExactFp32) {
  planTask("level2", "80_conv2d_bn_relu", {}, EagerPrecision{true, false});
  const std::string first = next(std::nullopt);
  ASSERT_NE(first, "");
  ASSERT_NE(lastCuda().find("CUDNN_TENSOR_OP_MATH}"), std::string::npos);
  loop::Feedback moved;
  moved.failedChecks = {"buffer_mismatch"};
  EXPECT_EQ(next(moved), first);
  EXPECT_EQ(lastCuda().find("CUDNN_TENSOR_OP_MATH"), std::string::npos);
  EXPECT_NE(lastCuda().find("fp32 (eager's TF32 form moved the running statistics beyond the tolerance)"),
            std::string::npos);

  planTask("level2", "80_conv2d_bn_relu", {}, EagerPrecision{false, false});
  ASSERT_NE(next(std::nullopt), "");
  const bool retried = !next(moved).empty();
  EXPECT_TRUE(!retried || lastCuda().find("moved the running statistics") == std::string::npos);
}

// --precision fp32: exact fp32 from the start, whatever eager's flags.
TEST_F(Refine, PrecisionFp32KeepsExactFp32Everywhere) {
  planTask("level1", "62_conv2d_3x3", {}, EagerPrecision{true, true}, "fp32");
  ASSERT_NE(next(std::nullopt), "");
  EXPECT_NE(lastCuda().find("{CUDNN_FMA_MATH, CUDNN_FMA_MATH}};"), std::string::npos);
  EXPECT_EQ(lastCuda().find("CUDNN_DEFAULT_MATH"), std::string::npos);
  EXPECT_NE(lastCuda().find("exact fp32 (FMA math), as the job asks (--precision fp32)"), std::string::npos);
}

// A library call none of whose forms ran on the GPU (cuDNN refused every engine and the program had
// no other form: the status names step k0): the same variant again, with that convolution in
// PyTorch and the rest compiled, and the loop told the plan changed.
TEST_F(Refine, ALibraryCallNoFormRanStaysInPyTorch) {
  planTask("level2", "81_conv2d_relu_maxpool", {});
  const std::string first = next(std::nullopt);
  ASSERT_NE(first, "");
  EXPECT_FALSE(draft->plan);
  EXPECT_NE(lastCuda().find("return sc_step_status(sc_conv_launch("), std::string::npos);
  EXPECT_EQ(next(failedWith(100000 + 20000 + 3000)), first);
  ASSERT_TRUE(draft && draft->plan);
  const auto& uncovered = draft->plan->plan.uncovered;
  ASSERT_EQ(uncovered.size(), 1u);
  EXPECT_NE(uncovered[0].find("its cuDNN call (step k0) had no form that ran on the GPU (cuDNN status 3000)"),
            std::string::npos)
      << uncovered[0];
  EXPECT_TRUE(draft->plan->math.empty());  // no library call left: no compute floor
  ASSERT_TRUE(draft->plan->plan.coverage);
  EXPECT_LT(draft->plan->plan.coverage->coveredOperators, draft->plan->plan.coverage->operators);
  EXPECT_NE(draft->title.find("step k0's convolution left in PyTorch (cuDNN status 3000)"), std::string::npos);
  EXPECT_EQ(lastCuda().find("sc_conv_launch("), std::string::npos);
  EXPECT_NE(lastPython().find("torch.ops.aten.convolution"), std::string::npos);
  EXPECT_NE(lastPython().find("_stitch_lib.segment(0, "), std::string::npos);
}

// A failure whose status names no library step is retried as before: scalar accesses, plan kept.
TEST_F(Refine, AFailureOfNoLibraryStepKeepsThePlan) {
  planTask("level2", "81_conv2d_relu_maxpool", {});
  ASSERT_NE(next(std::nullopt), "");
  EXPECT_EQ(next(failedWith(20000 + 3000)), BuiltinBrain::variants().back().name());
  EXPECT_FALSE(draft->plan);
  EXPECT_NE(lastCuda().find("sc_conv_launch("), std::string::npos);
}

// A lone TF32 convolution is planned NCHW by policy (its input copy is not known to pay): after
// the first verified candidate the same variant runs channels-last, and the faster by the
// verifier's median is kept; the plan says what each measured.
TEST_F(Refine, TheLayoutIsTriedBothWaysAndTheFasterKept) {
  planTask("level2", "81_conv2d_relu_maxpool", {}, EagerPrecision{true, false});
  const std::string first = next(std::nullopt);
  ASSERT_NE(first, "");
  EXPECT_FALSE(draft->plan);
  const std::string clShape = "CUDNN_TENSOR_OP_MATH}, 1};";  // sc_conv_shape's channels_last
  EXPECT_EQ(lastCuda().find(clShape), std::string::npos) << "planned NCHW first";
  const std::string nchwCuda = lastCuda();
  EXPECT_EQ(next(timed(1.0)), first);
  ASSERT_TRUE(draft->plan);
  EXPECT_NE(draft->title.find("channels-last (layout trial)"), std::string::npos) << draft->title;
  EXPECT_NE(convTechnique().find("trying channels-last after the planner's NCHW measured 1.000 ms"), std::string::npos)
      << convTechnique();
  EXPECT_NE(lastCuda(), nchwCuda);
  EXPECT_NE(lastCuda().find(clShape), std::string::npos);
  const std::string second = next(timed(0.8));
  EXPECT_NE(second, "");
  EXPECT_NE(second, first);
  ASSERT_TRUE(draft->plan);
  EXPECT_NE(convTechnique().find("NCHW 1.000 ms, channels-last 0.800 ms: channels-last kept"), std::string::npos)
      << convTechnique();
  EXPECT_NE(draft->title.find("channels-last kept (measured)"), std::string::npos) << draft->title;
  EXPECT_NE(lastCuda().find(clShape), std::string::npos);
}

// A convolution alone, its result the forward's: one cuDNN call, which no launch variant changes,
// still gets the layout trial (its result copied back to NCDHW by a kernel of its own).
TEST_F(Refine, ALoneConvolutionsLayoutIsTriedToo) {
  planTask("", "lone_conv", {}, EagerPrecision{true, false});
  const std::string first = next(std::nullopt);
  ASSERT_NE(first, "");
  const std::string clShape = "CUDNN_TENSOR_OP_MATH}, 1};";
  EXPECT_EQ(lastCuda().find(clShape), std::string::npos) << "planned NCHW first";
  EXPECT_EQ(next(timed(1.0)), first);
  ASSERT_TRUE(draft);
  EXPECT_NE(draft->title.find("channels-last (layout trial)"), std::string::npos) << draft->title;
  EXPECT_NE(lastCuda().find(clShape), std::string::npos);
}

TEST_F(Refine, ASlowerOrFailedLayoutTrialKeepsThePlannersLayout) {
  for (const bool fails : {false, true}) {
    planTask("level2", "81_conv2d_relu_maxpool", {}, EagerPrecision{true, false});
    const std::string first = next(std::nullopt);
    ASSERT_EQ(next(timed(1.0)), first);
    EXPECT_NE(lastCuda().find("CUDNN_TENSOR_OP_MATH}, 1};"), std::string::npos);
    loop::Feedback other = timed(1.2);
    if (fails) other.passed = false, other.medianMs.reset(), other.failedChecks = {"output_mismatch"};
    const std::string second = next(other);
    EXPECT_NE(second, "") << "a failed trial does not end the search";
    EXPECT_NE(second, first);
    ASSERT_TRUE(draft->plan);
    EXPECT_NE(convTechnique().find(fails ? "channels-last tried and failed (output_mismatch): NCHW kept"
                                         : "NCHW 1.000 ms, channels-last 1.200 ms: NCHW kept"),
              std::string::npos)
        << convTechnique();
    EXPECT_EQ(lastCuda().find("CUDNN_TENSOR_OP_MATH}, 1};"), std::string::npos);
  }
}

// A network the planner runs channels-last whose TF32 candidate misses the tolerance (cuDNN's NHWC
// kernels run TF32 where eager's NCHW algorithm may be exact fp32): NCHW in eager's precision is
// tried before exact fp32, and kept where it passes; where it fails too, the planner's plan gets
// its exact-fp32 retry.
TEST_F(Refine, AChannelsLastMismatchTriesNchwBeforeExactFp32) {
  for (const bool nchwPasses : {true, false}) {
    SCOPED_TRACE(nchwPasses ? "NCHW passes" : "NCHW fails too");
    planTask("level3", "88_resnet_basic_block", {}, EagerPrecision{true, false});
    const std::string first = next(std::nullopt);
    const std::string clShape = "CUDNN_TENSOR_OP_MATH}, 1};";
    ASSERT_NE(lastCuda().find(clShape), std::string::npos) << "planned channels-last";
    loop::Feedback wrong;
    wrong.built = true;
    wrong.failedChecks = {"output_mismatch"};
    EXPECT_EQ(next(wrong), first);
    ASSERT_TRUE(draft->plan);
    EXPECT_NE(draft->title.find("NCHW (layout trial)"), std::string::npos) << draft->title;
    EXPECT_EQ(lastCuda().find(clShape), std::string::npos);
    EXPECT_NE(lastCuda().find("{CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH}"), std::string::npos) << "eager's TF32";
    EXPECT_NE(convTechnique().find("trying NCHW after the planner's channels-last missed the tolerance"),
              std::string::npos)
        << convTechnique();
    if (nchwPasses) {
      const std::string third = next(timed(1.0));
      EXPECT_NE(third, first);
      EXPECT_NE(convTechnique().find("channels-last missed the tolerance, NCHW 1.000 ms: NCHW kept"), std::string::npos)
          << convTechnique();
      EXPECT_EQ(lastCuda().find(clShape), std::string::npos);
    } else {
      EXPECT_EQ(next(wrong), first);
      EXPECT_NE(draft->title.find("fp32 (eager's TF32 form missed the tolerance)"), std::string::npos) << draft->title;
      // (exact fp32 convolutions, by the planner's policy, run NCHW: MemoryFormat.h)
      EXPECT_NE(lastCuda().find("{CUDNN_FMA_MATH, CUDNN_FMA_MATH}};"), std::string::npos);
    }
  }
}

// The verifier's fp64 truth tells the two cases apart: a candidate about as far off as eager
// itself (ResNet-101 on an H200: 0.168 against eager's 0.157) rounds as eager's TF32 does, and NCHW
// would run TF32 too, so the exact-fp32 retry comes first; one far further off than an exact eager
// (2e-3 against 1.3e-6, level2/85) gets the NCHW trial.
TEST_F(Refine, AMismatchAsFarOffAsEagerRetriesInExactFp32BeforeTheLayoutTrial) {
  for (const bool asFarAsEager : {true, false}) {
    SCOPED_TRACE(asFarAsEager ? "as far off as eager" : "eager exact");
    planTask("level3", "88_resnet_basic_block", {}, EagerPrecision{true, false});
    const std::string first = next(std::nullopt);
    loop::Feedback wrong;
    wrong.built = true;
    wrong.failedChecks = {"output_mismatch"};
    wrong.verifier = profiling::VerifierFeedback{"fix", "output_mismatch", "", "", "", {}, {}, {}};
    wrong.verifier->evidence = {{"candidate_truth_err", asFarAsEager ? 0.168 : 2e-3, "abs err"},
                                {"reference_truth_err", asFarAsEager ? 0.157 : 1.3e-6, "abs err"}};
    EXPECT_EQ(next(wrong), first);
    if (asFarAsEager) {
      EXPECT_NE(draft->title.find("fp32 (eager's TF32 form missed the tolerance)"), std::string::npos) << draft->title;
      EXPECT_EQ(draft->title.find("layout trial"), std::string::npos) << draft->title;
      EXPECT_NE(lastCuda().find("{CUDNN_FMA_MATH, CUDNN_FMA_MATH}};"), std::string::npos);
    } else {
      EXPECT_NE(draft->title.find("NCHW (layout trial)"), std::string::npos) << draft->title;
    }
  }
}

// No trial where the job names the layout, nor where no convolution would change format.
TEST_F(Refine, NoLayoutTrialWhereTheLayoutIsNotAGuess) {
  planTask("level2", "81_conv2d_relu_maxpool", {}, EagerPrecision{true, false}, "eager", "nchw");
  const std::string first = next(std::nullopt);
  EXPECT_NE(next(timed(1.0)), first);
  EXPECT_FALSE(draft->plan);
  planTask("level2", "12_elementwise_chain", {});
  const std::string elementwise = next(std::nullopt);
  EXPECT_NE(next(timed(1.0)), elementwise);
  EXPECT_FALSE(draft->plan);
  EXPECT_EQ(draft->title.find("layout"), std::string::npos);
}

// The trace shows the cuDNN step (k0, before the pooling kernel k1) taking 300 us per forward where
// eager spent 100 us on the whole line (conv, relu and pool): the same variant with eager's
// convolution, and the loop told the plan changed; slower, and the convolution is ours again.
TEST_F(Refine, AConvolutionSlowerThanEagersIsTriedInPyTorchAndKeptOnlyIfFaster) {
  lineTimes = {{16, 100.0}};
  planTask("level2", "81_conv2d_relu_maxpool", {}, std::nullopt, "eager", "nchw");
  const std::string first = next(std::nullopt);
  EXPECT_NE(lastCuda().find("sc_conv_launch("), std::string::npos);
  loop::Feedback traced = timed(0.5);
  traced.launches = {{"sm90_xmma_fprop_implicit_gemm", 290, 0}, {"void sc_conv_epi_pass<4>()", 10, 0},
                     {"void k1_kernel<4>()", 20, 0}};
  traced.tracedForwards = 1;
  EXPECT_EQ(next(traced), first);
  ASSERT_TRUE(draft && draft->plan);
  EXPECT_NE(draft->title.find("step k0's convolution in PyTorch (measured slower than eager's)"), std::string::npos)
      << draft->title;
  ASSERT_EQ(draft->plan->plan.uncovered.size(), 1u);
  EXPECT_NE(draft->plan->plan.uncovered[0].find("took 300.0 us per forward where eager's whole line(s)"),
            std::string::npos)
      << draft->plan->plan.uncovered[0];
  EXPECT_NE(lastPython().find("torch.ops.aten.convolution"), std::string::npos);
  EXPECT_EQ(lastCuda().find("sc_conv_launch("), std::string::npos);
  const std::string third = next(timed(0.6));
  EXPECT_NE(third, "");
  EXPECT_NE(third, first);
  ASSERT_TRUE(draft->plan);
  EXPECT_TRUE(draft->plan->plan.uncovered.empty());
  EXPECT_NE(draft->title.find("our convolution kept (with eager's the candidate measured no faster)"),
            std::string::npos)
      << draft->title;
  EXPECT_NE(lastCuda().find("sc_conv_launch("), std::string::npos);
}

TEST_F(Refine, AConvolutionWithinEagersTimeStaysOurs) {
  lineTimes = {{16, 400.0}};
  planTask("level2", "81_conv2d_relu_maxpool", {}, std::nullopt, "eager", "nchw");
  const std::string first = next(std::nullopt);
  loop::Feedback traced = timed(0.5);
  traced.launches = {{"sm90_xmma_fprop_implicit_gemm", 290, 0}, {"void k1_kernel<4>()", 20, 0}};
  traced.tracedForwards = 1;
  EXPECT_NE(next(traced), first);
  EXPECT_FALSE(draft->plan);
}

TEST(LibraryFailureStep, ReadsTheStepOfALibraryStatus) {
  EXPECT_EQ(libraryFailureStep(4 * 100000 + 20000 + 3000), 3u);
  EXPECT_EQ(libraryFailureStep(100000 + 10000 + 15), 0u);
  EXPECT_FALSE(libraryFailureStep(20000 + 3000));  // a program from before steps were named
  EXPECT_FALSE(libraryFailureStep(700));            // cudaErrorIllegalAddress
  EXPECT_FALSE(libraryFailureStep(100000 + 700));   // no library status under the step
}

TEST_F(Refine, EveryVariantIsWrittenOnceAtMost) {
  std::set<std::string> seen;
  for (std::string v = next(std::nullopt); !v.empty(); v = next(verified("below_memory_floor")))
    EXPECT_TRUE(seen.insert(v).second) << v;
  EXPECT_EQ(seen.size(), BuiltinBrain::variants().size());
}

}  // namespace
}  // namespace stitch::agents::builtin
