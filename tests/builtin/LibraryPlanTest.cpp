// Pins the library anchors on the recorded fixtures: which operators become cuBLASLt / cuDNN
// calls, which epilogue ops fold into cuBLASLt and which stay in a generated tail kernel, the
// graph normalization behind them, and the host program the coder emits (CUDA-graph replay,
// intermediate buffers planned once).
#include "FixtureGraphs.h"

#include "agents/builtin/emit/LibraryEmitter.h"
#include "agents/builtin/plan/LibraryVsEager.h"

#include <gtest/gtest.h>

namespace stitch::agents::builtin {
namespace {

using testing::fixtureCandidate;
using testing::loadFixture;

Plan planOf(const std::string& fixture, PlannerOptions options = {}) {
  auto g = loadFixture(fixture);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? makePlan(g.value(), {}, options) : Plan{};
}

std::string kinds(const Plan& p) {
  std::string s;
  for (const auto& k : p.kernels)
    s += !k.library ? "K" : k.library->kind == LibraryCall::Kind::Gemm ? "G" : "C";
  return s;
}

TEST(LibraryPlan, LinearBiasReluIsOneCublasLtCallWithTheEpilogue) {
  const Plan p = planOf("72_linear_relu");
  ASSERT_EQ(kinds(p), "G");
  const GemmCall& g = p.kernels[0].library->gemm;
  EXPECT_EQ(g.m, 32768);
  EXPECT_EQ(g.k, 256);
  EXPECT_TRUE(g.bias.has_value());
  EXPECT_EQ(g.activation, GemmActivation::Relu);
  // linear's weight is read through its transposed view: column-major, no copy.
  EXPECT_EQ(g.b.rowStride, 1);
  EXPECT_EQ(g.b.colStride, 256);
  EXPECT_EQ(g.a.colStride, 1);
  auto graph = loadFixture("72_linear_relu");
  EXPECT_EQ(g.output, graph.value().outputs[0]);
  EXPECT_NE(p.kernels[0].technique.find("bias + relu epilogue"), std::string::npos) << p.kernels[0].technique;
}

TEST(LibraryPlan, TanhGeluFoldsButErfGeluStaysInAGeneratedKernel) {
  const Plan tanh = planOf("73_linear_gelu_tanh");
  ASSERT_EQ(kinds(tanh), "G");
  EXPECT_EQ(tanh.kernels[0].library->gemm.activation, GemmActivation::GeluTanh);
  const Plan erf = planOf("74_linear_gelu");
  ASSERT_EQ(kinds(erf), "GK");
  EXPECT_TRUE(erf.kernels[0].library->gemm.bias.has_value());
  EXPECT_EQ(erf.kernels[0].library->gemm.activation, GemmActivation::None);
  EXPECT_EQ(erf.kernels[1].reads(), std::vector<std::string>{erf.kernels[0].library->output()});
}

TEST(LibraryPlan, AddmmAlphaFoldsIntoTheGemmAndBetaTimesSelfIntoTheTail) {
  const Plan p = planOf("61_addmm_beta_alpha");
  ASSERT_EQ(kinds(p), "GK");
  EXPECT_DOUBLE_EQ(p.kernels[0].library->gemm.alpha, 2.0);
  EXPECT_FALSE(p.kernels[0].library->gemm.bias.has_value());  // c is a full matrix, not a row bias
  EXPECT_EQ(p.kernels[1].kernel.inputs.size(), 2u);           // the product and c, each read once
}

TEST(LibraryPlan, ThreeLayerMlpIsThreeGemmsWithReluEpilogues) {
  const Plan p = planOf("86_mlp_3layer");
  ASSERT_EQ(kinds(p), "GGG");
  EXPECT_EQ(p.kernels[0].library->gemm.activation, GemmActivation::Relu);
  EXPECT_EQ(p.kernels[1].library->gemm.activation, GemmActivation::Relu);
  EXPECT_EQ(p.kernels[2].library->gemm.activation, GemmActivation::None);
  EXPECT_EQ(p.kernels[1].library->gemm.a.tensorId, p.kernels[0].library->output());
}

TEST(LibraryPlan, UnfusedReplanKeepsEpiloguesOutOfTheLibrary) {
  PlannerOptions unfused;
  unfused.fuse = false;
  EXPECT_EQ(kinds(planOf("72_linear_relu", unfused)), "GKK");
}

// The first batch norm and ReLU end where the second convolution starts: they become the first
// convolution's epilogue. The second's tail goes on into the residual add, a generated kernel.
TEST(LibraryPlan, ResnetBlockAlternatesConvolutionsAndFusedTails) {
  const Plan p = planOf("88_resnet_basic_block");
  ASSERT_EQ(kinds(p), "CCK");
  const ConvCall& c = p.kernels[0].library->conv;
  EXPECT_FALSE(c.transposed);
  EXPECT_EQ(c.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(c.groups, 1);
  EXPECT_FALSE(c.epilogue.mean.empty());
  EXPECT_TRUE(c.epilogue.relu);
  EXPECT_NE(p.kernels[0].technique.find("cuDNN's fused bias-activation call"), std::string::npos);
  EXPECT_TRUE(p.kernels[1].library->conv.epilogue.empty());
  // The tail reads the block's input for the residual add.
  auto graph = loadFixture("88_resnet_basic_block");
  const auto reads = p.kernels[2].reads();
  EXPECT_NE(std::find(reads.begin(), reads.end(), graph.value().inputs[0]), reads.end());
}

TEST(LibraryPlan, TransposedStridedConvolutionAndItsBias) {
  const Plan p = planOf("70_conv_transpose2d_strided");
  ASSERT_EQ(kinds(p), "CK");
  const ConvCall& c = p.kernels[0].library->conv;
  EXPECT_TRUE(c.transposed);
  EXPECT_EQ(c.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.weightShape, (std::vector<int64_t>{128, 64, 4, 4}));
  EXPECT_EQ(c.outShape, (std::vector<int64_t>{16, 64, 128, 128}));
  EXPECT_GT(p.kernels[0].library->flops(), 0);
}

TEST(LibraryPlan, DepthwiseConvolutionsAreGeneratedWithTheirTailFused) {
  const Plan single = planOf("65_conv2d_depthwise");
  ASSERT_EQ(single.kernels.size(), 1u);
  EXPECT_FALSE(single.kernels[0].library);
  EXPECT_NE(single.kernels[0].technique.find("depthwise convolution"), std::string::npos);
  EXPECT_EQ(single.kernels[0].operators.size(), 2u);  // the convolution and its split-off bias
  auto c = fixtureCandidate("65_conv2d_depthwise");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NE(c.value().cuda.find("(const float* __restrict__ in0, const float* __restrict__ wgt, int64_t lin)"),
            std::string::npos);
  EXPECT_NE(c.value().cuda.find("* wgt[(int64_t)0LL + c1 * (int64_t)9LL + k0 * (int64_t)3LL + k1 * (int64_t)1LL]"),
            std::string::npos);
  EXPECT_EQ(c.value().cuda.find("cudnn"), std::string::npos);
  // Depthwise, then batch norm and ReLU in the same kernel; the pointwise convolution is cuDNN's
  // (or a cuBLASLt GEMM's), its batch norm and ReLU in its epilogue.
  const Plan separable = planOf("93_depthwise_separable");
  ASSERT_EQ(separable.kernels.size(), 2u);
  EXPECT_FALSE(separable.kernels[0].library);
  EXPECT_NE(separable.kernels[0].technique.find("depthwise convolution"), std::string::npos);
  ASSERT_TRUE(separable.kernels[1].library);
  EXPECT_EQ(separable.kernels[1].library->conv.groups, 1);
  EXPECT_FALSE(separable.kernels[1].library->conv.epilogue.mean.empty());
  EXPECT_TRUE(separable.kernels[1].library->conv.epilogue.relu);
}

// A forward convolution takes an inference batch norm and a ReLU (and a bias before them) into
// its epilogue where they end the chain: the stem's two Conv-BN-ReLU blocks
// are two library steps, each passing the batch norm's four parameters, and nothing else.
TEST(LibraryPlan, ConvolutionBatchNormReluIsOneStepWithTheEpilogue) {
  const Plan stem = planOf("87_conv_bn_relu_stem");
  ASSERT_EQ(stem.kernels.size(), 2u);
  for (const auto& k : stem.kernels) {
    ASSERT_TRUE(k.library);
    const ConvEpilogue& e = k.library->conv.epilogue;
    EXPECT_TRUE(e.bias.empty());
    EXPECT_FALSE(e.mean.empty() || e.var.empty() || e.scale.empty() || e.shift.empty());
    EXPECT_TRUE(e.relu);
    EXPECT_EQ(k.library->reads().size(), 6u);  // input, weight, mean, var, scale, shift
    EXPECT_NE(k.technique.find("batch norm + relu epilogue"), std::string::npos);
  }
  auto c = fixtureCandidate("87_conv_bn_relu_stem");
  ASSERT_TRUE(c.ok()) << c.error().message;
  // Its images are the call's (RuntimeRows.h): a state per row count.
  EXPECT_NE(c.value().cuda.find("(1e-05f), 1};\n  return sc_step_status(sc_conv_launch(sc_conv_for_rows(&k0_state, rows), &s, "),
            std::string::npos);
  EXPECT_NE(c.value().cuda.find("return sc_direct_launch<16, 3, 3>(s, x, w, y, e, stream);"), std::string::npos);

  EXPECT_NE(c.value().cuda.find("cudnnConvolutionBiasActivationForward("), std::string::npos);

  // Wider convolutions too (no direct kernel): a bias before the ReLU joins it.
  const Plan relu = planOf("79_conv2d_relu");
  ASSERT_EQ(relu.kernels.size(), 1u);
  EXPECT_EQ(directConvTile(relu.kernels[0].library->conv), 0);
  EXPECT_FALSE(relu.kernels[0].library->conv.epilogue.bias.empty());
  EXPECT_TRUE(relu.kernels[0].library->conv.epilogue.relu);

  // A bias alone joins too; a transposed convolution's tail stays in a generated kernel.
  const Plan pointwise = planOf("66_conv2d_pointwise");
  ASSERT_EQ(pointwise.kernels.size(), 1u);
  EXPECT_FALSE(pointwise.kernels[0].library->conv.epilogue.bias.empty());
  EXPECT_TRUE(pointwise.kernels[0].library->conv.epilogue.mean.empty());
  const Plan upsample = planOf("83_conv_transpose2d_tanh_scale");
  ASSERT_GE(upsample.kernels.size(), 2u);
  EXPECT_TRUE(upsample.kernels[0].library->conv.epilogue.empty());
}

// Where the tail goes on into generated work (a pooling window, a reduction), it fuses there and
// the convolution keeps no epilogue (its output is read once either way, and cuDNN's needs no
// pass of its own).
TEST(LibraryPlan, ATailIntoGeneratedWorkStaysThere) {
  const Plan pool = planOf("81_conv2d_relu_maxpool");
  ASSERT_EQ(pool.kernels.size(), 2u);
  EXPECT_TRUE(pool.kernels[0].library->conv.epilogue.empty());
  for (const auto& k : planOf("92_se_block").kernels) {
    if (k.library && k.library->kind == LibraryCall::Kind::Conv) {
      EXPECT_TRUE(k.library->conv.epilogue.empty());
    }
  }
}

TEST(LibraryPlan, GroupedConvolutionsRunOneCuDnnCallPerGroup) {
  const ConvCall grouped = planOf("64_conv2d_grouped").kernels[0].library->conv;
  EXPECT_EQ(grouped.groups, 32);
  EXPECT_EQ(groupCalls(grouped), 32);  // one call per group, all on the caller's stream
  EXPECT_EQ(groupCalls(planOf("62_conv2d_3x3").kernels[0].library->conv), 1);
  auto c = fixtureCandidate("64_conv2d_grouped");
  ASSERT_TRUE(c.ok()) << c.error().message;
  // groups 32, forward, 32 calls, FMA math
  EXPECT_NE(c.value().cuda.find("{1, 1, 0}, 32, 0, 32, {CUDNN_FMA_MATH, CUDNN_FMA_MATH}};"), std::string::npos);
}

// Convolutions whose outputs sum few products also get the direct kernel, with the channel tile
// and window compiled in; the first call measures it against cuDNN's choice. Wider ones do not.
TEST(LibraryCoder, FewProductsPerOutputAlsoGetTheDirectKernel) {
  auto lenet = fixtureCandidate("91_lenet5");
  ASSERT_TRUE(lenet.ok()) << lenet.error().message;
  const std::string& cu = lenet.value().cuda;
  EXPECT_NE(cu.find("return sc_direct_launch<8, 5, 5>(s, x, w, y, e, stream);"), std::string::npos);   // 1 -> 6
  EXPECT_NE(cu.find("return sc_direct_launch<16, 5, 5>(s, x, w, y, e, stream);"), std::string::npos);  // 6 -> 16
  EXPECT_NE(cu.find("k0_direct, stream), 0);"), std::string::npos);
  auto grouped = fixtureCandidate("64_conv2d_grouped");
  ASSERT_TRUE(grouped.ok()) << grouped.error().message;
  EXPECT_NE(grouped.value().cuda.find("sc_direct_launch<8, 3, 3>"), std::string::npos);  // 8 channels per group
  auto resnet = fixtureCandidate("88_resnet_basic_block");  // 64 x 3 x 3 = 576 products per output
  ASSERT_TRUE(resnet.ok()) << resnet.error().message;
  EXPECT_EQ(resnet.value().cuda.find("sc_direct_launch<"), std::string::npos);
  EXPECT_NE(resnet.value().cuda.find("nullptr, stream), "), std::string::npos);
}

// A 1x1 convolution (stride 1, no padding, one group) is a GEMM per image over its pixels: its
// candidate carries cuBLASLt and measures that GEMM, the weight shared by every image (batch
// stride 0), against cuDNN, in place of the direct kernel; its batch norm and ReLU still fold.
// A library launcher's failure carries its step's index in the plan (sc_step_status), which the
// refine step reads back (libraryFailureStep) to leave that call to PyTorch.
TEST(LibraryCoder, EachLauncherTagsItsFailureWithItsStep) {
  for (const char* fixture : {"86_mlp_3layer", "88_resnet_basic_block", "partial_rnn_lstm"}) {
    auto laid = testing::fixtureLaidOut(fixture);
    ASSERT_TRUE(laid.ok()) << laid.error().message;
    const std::string cu = fixtureCandidate(fixture).value().cuda;
    int calls = 0;
    for (std::size_t k = 0; k < laid.value().plan.kernels.size(); ++k) {
      const PlannedKernel& p = laid.value().plan.kernels[k];
      if (!p.library) continue;
      ++calls;
      const auto at = cu.find("static int launch_" + p.id + "(");
      ASSERT_NE(at, std::string::npos) << fixture << " " << p.id;
      const std::string launcher = cu.substr(at, cu.find("\n}\n", at) - at);
      const std::string tail = ", stream), " + std::to_string(k) + ");";
      EXPECT_TRUE(launcher.ends_with(tail)) << fixture << ":\n" << launcher;
      EXPECT_NE(launcher.find("return sc_step_status("), std::string::npos) << fixture << ":\n" << launcher;
    }
    EXPECT_GT(calls, 0) << fixture;
  }
}

TEST(LibraryCoder, PointwiseConvolutionsMeasureAGemmOverPixels) {
  auto pointwise = fixtureCandidate("66_conv2d_pointwise");  // 32 x 256 x 56x56 -> 512 channels
  ASSERT_TRUE(pointwise.ok()) << pointwise.error().message;
  const std::string& cu = pointwise.value().cuda;
  EXPECT_NE(cu.find("#include <cublasLt.h>"), std::string::npos);
  EXPECT_NE(cu.find("static const sc_gemm_shape k0_gemm_shape = {32, 512, 3136, 256, 256, 1, 0, 3136, 1, 802816, "),
            std::string::npos);
  // One image per batch entry of the GEMM, as many as the call's images.
  EXPECT_NE(cu.find("  g.batch = s->in[0];\n  const int st = sc_gemm_launch(sc_gemm_for_rows(&k0_gemm, g.batch), &g, w, x, "
                    "nullptr, y, stream);"),
            std::string::npos);
  EXPECT_NE(cu.find("k0_pointwise, stream), 0);"), std::string::npos);
  EXPECT_EQ(cu.find("sc_direct_launch<"), std::string::npos);

  const Plan separable = planOf("93_depthwise_separable");
  ASSERT_TRUE(separable.kernels.back().library);
  EXPECT_TRUE(pointwiseGemm(separable.kernels.back().library->conv));
  EXPECT_NE(separable.kernels.back().technique.find("cuBLASLt GEMM per image"), std::string::npos);
  EXPECT_EQ(separable.kernels.back().technique.find("direct kernel"), std::string::npos);  // the GEMM replaces it

  ConvCall c = separable.kernels.back().library->conv;
  c.stride = {2, 2};
  EXPECT_FALSE(pointwiseGemm(c));
  c.stride = {1, 1};
  c.padding = {1, 1};
  EXPECT_FALSE(pointwiseGemm(c));
  c.padding = {0, 0};
  c.inputOffset = 4;  // a slice: cuBLASLt's kernels assume aligned operands
  EXPECT_FALSE(pointwiseGemm(c));
  c.inputOffset = 0;
  EXPECT_FALSE(pointwiseGemm(planOf("88_resnet_basic_block").kernels[0].library->conv));  // 3x3
}

// Transposed convolutions get the direct gather kernel with the window and strides compiled in
// (a unit height for 1-D), and only their candidates carry its templates.
TEST(LibraryCoder, TransposedConvolutionsAlsoGetTheDirectGatherKernel) {
  auto upsample = fixtureCandidate("83_conv_transpose2d_tanh_scale");  // 64 -> 32, 4x4, stride 2
  ASSERT_TRUE(upsample.ok()) << upsample.error().message;
  EXPECT_NE(upsample.value().cuda.find("const int st = sc_deconv_launch<16, 4, 4, 2, 2>(s, x, w, y, stream);"),
            std::string::npos);
  EXPECT_NE(upsample.value().cuda.find("k0_direct, stream), 0);"), std::string::npos);
  EXPECT_NE(planOf("83_conv_transpose2d_tanh_scale").kernels[0].technique.find("direct gather kernel"), std::string::npos);
  auto oneD = fixtureCandidate("69_conv_transpose1d");  // 256 -> 128, k4, stride 2
  ASSERT_TRUE(oneD.ok()) << oneD.error().message;
  EXPECT_NE(oneD.value().cuda.find("sc_deconv_launch<16, 1, 4, 1, 2>"), std::string::npos);
  auto forward = fixtureCandidate("62_conv2d_3x3");
  ASSERT_TRUE(forward.ok()) << forward.error().message;
  EXPECT_EQ(forward.value().cuda.find("sc_direct_deconv"), std::string::npos);

  ConvCall wide = planOf("83_conv_transpose2d_tanh_scale").kernels[0].library->conv;
  EXPECT_EQ(directDeconvTile(wide), 16);
  wide.dilation = {2, 2};
  EXPECT_EQ(directDeconvTile(wide), 0);  // dilated: cuDNN alone
  wide.dilation = {1, 1};
  wide.inShape[1] = 256;  // 256 channels x 4 taps per phase: 8 channels per thread fit 32 KiB
  EXPECT_EQ(directDeconvTile(wide), 8);
  wide.inShape[1] = 4096;
  EXPECT_EQ(directDeconvTile(wide), 0);
}

TEST(LibraryCoder, SeveralStepsReplayAsACudaGraphAndShareIntermediateBuffers) {
  auto c = fixtureCandidate("88_resnet_basic_block");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& cu = c.value().cuda;
  EXPECT_NE(cu.find("cudaStreamBeginCapture"), std::string::npos);
  EXPECT_NE(cu.find("cudaGraphLaunch(g->graphs[i].exec, stream)"), std::string::npos);
  EXPECT_NE(cu.find("#include <cudnn.h>"), std::string::npos);
  EXPECT_NE(cu.find("CUDNN_FMA_MATH"), std::string::npos);
  EXPECT_EQ(cu.find("#include <cublasLt.h>"), std::string::npos);
  // conv1 and its epilogue -> buf0, conv2 -> buf1, planned once; only the result is allocated
  // per call.
  const std::string& py = c.value().python;
  EXPECT_NE(py.find("buf0, buf1 = buffers"), std::string::npos) << py;
  EXPECT_NE(py.find("buf0, buf1, out0)"), std::string::npos) << py;
  EXPECT_EQ(py.find("out1 = "), std::string::npos) << py;
}

TEST(LibraryCoder, TensorCoresOnlyWhereTheJobAllowsTf32) {
  // Default: no TF32 anywhere in the source, which the verifier's static check would flag.
  for (const char* fixture : {"86_mlp_3layer", "88_resnet_basic_block"}) {
    auto c = fixtureCandidate(fixture);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c.value().cuda.find("tf32"), std::string::npos) << fixture;
    EXPECT_EQ(c.value().cuda.find("FAST_TF32"), std::string::npos) << fixture;
    EXPECT_EQ(c.value().cuda.find("TENSOR_OP_MATH"), std::string::npos) << fixture;
    EXPECT_NE(c.value().cuda.find("return (int)cudaErrorNotSupported;"), std::string::npos) << fixture;
  }
  PlannerOptions allowed;
  allowed.tensorCores = true;
  auto gemm = fixtureCandidate("86_mlp_3layer", allowed);
  ASSERT_TRUE(gemm.ok()) << gemm.error().message;
  const std::string& g = gemm.value().cuda;
  EXPECT_NE(g.find("cvt.rna.tf32.f32"), std::string::npos);
  EXPECT_NE(g.find("CUBLAS_COMPUTE_32F_FAST_TF32"), std::string::npos);
  // The small products first without the epilogue, the large one last with bias and ReLU.
  EXPECT_NE(g.find("sc_gemm_desc(&x->small, CUBLAS_COMPUTE_32F_FAST_TF32, s, CUBLASLT_EPILOGUE_DEFAULT)"),
            std::string::npos);
  EXPECT_NE(g.find("sc_gemm_desc(&x->large, CUBLAS_COMPUTE_32F_FAST_TF32, s, s->epilogue)"), std::string::npos);
  EXPECT_NE(g.find("ms < fp32_ms"), std::string::npos);  // kept only when measured faster
  auto conv = fixtureCandidate("88_resnet_basic_block", allowed);
  ASSERT_TRUE(conv.ok()) << conv.error().message;
  EXPECT_NE(conv.value().cuda.find("sc_conv_desc(&t->conv, s, CUDNN_TENSOR_OP_MATH)"), std::string::npos);
  EXPECT_NE(planOf("86_mlp_3layer", allowed).kernels[0].technique.find("3xTF32"), std::string::npos);
}

// Each library call runs in the precision eager uses for it (design §7): a convolution may use TF32
// tensor cores (cuDNN's default and tensor-op math types, both measured) where eager's
// cudnn.allow_tf32 is on, a GEMM computes in TF32 where eager's cuda.matmul.allow_tf32 is; else
// FMA math and fp32 compute. The source names TF32 only where a call uses it, the plan says which
// precision each call runs in and why, and a TF32 call never also measures the 3xTF32 form.
TEST(LibraryCoder, EachLibraryCallRunsInEagersPrecision) {
  PlannerOptions eager;
  eager.convTf32 = true;
  eager.precisionWhy = PrecisionWhy::Eager;
  for (const char* fixture : {"88_resnet_basic_block", "62_conv2d_3x3", "70_conv_transpose2d_strided",
                              "87_conv_bn_relu_stem", "66_conv2d_pointwise"}) {
    SCOPED_TRACE(fixture);
    auto tf32 = fixtureCandidate(fixture, eager);
    ASSERT_TRUE(tf32.ok()) << tf32.error().message;
    const std::string& cu = tf32.value().cuda;
    EXPECT_NE(cu.find("_shape = {"), std::string::npos);
    EXPECT_NE(cu.find(", {CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH}"), std::string::npos);  // then ", 1" if channels-last
    EXPECT_EQ(cu.find("{CUDNN_FMA_MATH, CUDNN_FMA_MATH}"), std::string::npos);
    EXPECT_NE(cu.find("sc_conv_desc(&c->conv, s, s->math[0])"), std::string::npos);
    EXPECT_NE(cu.find("if (s->math[0] != CUDNN_FMA_MATH) return 0;"), std::string::npos);  // no 3xTF32 on top
    EXPECT_EQ(cu.find("FAST_TF32"), std::string::npos);  // a pointwise convolution's GEMM stays fp32
    const Plan p = planOf(fixture, eager);
    ASSERT_TRUE(p.kernels[0].library);
    EXPECT_TRUE(p.kernels[0].library->conv.tf32);
    EXPECT_NE(p.kernels[0].technique.find("TF32 tensor cores, as eager runs this convolution (cudnn.allow_tf32)"),
              std::string::npos) << p.kernels[0].technique;
    auto fp32 = fixtureCandidate(fixture);  // default options: exact fp32
    ASSERT_TRUE(fp32.ok()) << fp32.error().message;
    EXPECT_NE(fp32.value().cuda.find(", {CUDNN_FMA_MATH, CUDNN_FMA_MATH}};"), std::string::npos);
    EXPECT_EQ(fp32.value().cuda.find("CUDNN_DEFAULT_MATH"), std::string::npos);
    EXPECT_EQ(fp32.value().cuda.find("TENSOR_OP_MATH"), std::string::npos);
  }
  // The pointwise GEMM alternative is fp32 whatever cuDNN's math, and the plan says so.
  const std::string pointwise = planOf("66_conv2d_pointwise", eager).kernels[0].technique;
  EXPECT_NE(pointwise.find("(cuDNN's fastest (default or tensor-op math) or a cuBLASLt GEMM per image over its pixels in fp32)"), std::string::npos) << pointwise;
  auto pw = fixtureCandidate("66_conv2d_pointwise", eager);
  EXPECT_NE(pw.value().cuda.find(", 0, CUBLASLT_EPILOGUE_DEFAULT, CUBLAS_COMPUTE_32F};"), std::string::npos);

  // The same flags off, as eager's: exact fp32 and why.
  PlannerOptions off;
  off.precisionWhy = PrecisionWhy::Eager;
  EXPECT_NE(planOf("62_conv2d_3x3", off).kernels[0].technique.find(
                "exact fp32 (FMA math), as eager runs this convolution (cudnn.allow_tf32 off)"),
            std::string::npos);
  EXPECT_NE(planOf("86_mlp_3layer", off).kernels[0].technique.find(
                "exact fp32, as eager runs this matmul (cuda.matmul.allow_tf32 off)"),
            std::string::npos);
  PlannerOptions asked;
  asked.precisionWhy = PrecisionWhy::JobFp32;
  EXPECT_NE(planOf("62_conv2d_3x3", asked).kernels[0].technique.find(
                "exact fp32 (FMA math), as the job asks (--precision fp32)"),
            std::string::npos);

  // GEMMs: TF32 compute only where eager's matmul flag is on; convolution TF32 alone leaves them fp32.
  auto mlpConv = fixtureCandidate("86_mlp_3layer", eager);
  ASSERT_TRUE(mlpConv.ok()) << mlpConv.error().message;
  EXPECT_EQ(mlpConv.value().cuda.find("FAST_TF32"), std::string::npos);
  PlannerOptions matmul = eager;
  matmul.matmulTf32 = true;
  auto mlp = fixtureCandidate("86_mlp_3layer", matmul);
  ASSERT_TRUE(mlp.ok()) << mlp.error().message;
  const std::string& g = mlp.value().cuda;
  EXPECT_NE(g.find(", 1, CUBLASLT_EPILOGUE_RELU_BIAS, CUBLAS_COMPUTE_32F_FAST_TF32};"), std::string::npos);  // bias + relu, TF32
  EXPECT_NE(g.find("sc_gemm_desc(&g->op, s->compute, s, s->epilogue)"), std::string::npos);
  EXPECT_NE(g.find("cublasLtMatmulAlgoGetIds(sc_lt, s->compute,"), std::string::npos);
  EXPECT_NE(g.find("if (s->compute != CUBLAS_COMPUTE_32F) return 0;"), std::string::npos);  // no 3xTF32 on top
  EXPECT_EQ(g.find("CUDNN_"), std::string::npos);
  const Plan mp = planOf("86_mlp_3layer", matmul);
  EXPECT_TRUE(mp.kernels[0].library->gemm.tf32);
  EXPECT_NE(mp.kernels[0].technique.find(
                "TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32), as eager runs this matmul (cuda.matmul.allow_tf32)"),
            std::string::npos) << mp.kernels[0].technique;

  // With the 3xTF32 opt-in, only the exact-fp32 calls mention that form.
  PlannerOptions both = eager;
  both.tensorCores = true;
  EXPECT_EQ(planOf("62_conv2d_3x3", both).kernels[0].technique.find("3xTF32"), std::string::npos);
  EXPECT_NE(planOf("86_mlp_3layer", both).kernels[0].technique.find("3xTF32"), std::string::npos);

  // The refine step's fallback: every call back to exact fp32.
  Plan back = planOf("62_conv2d_3x3", both);
  EXPECT_TRUE(back.usesTf32());
  EXPECT_TRUE(back.toExactFp32());
  EXPECT_FALSE(back.usesTf32());
  EXPECT_FALSE(back.tensorCores);
  EXPECT_NE(back.kernels[0].technique.find("exact fp32 (FMA math)"), std::string::npos);
  EXPECT_FALSE(back.toExactFp32());
}

// One generated kernel runs directly; one library call replays as a graph, which costs the host
// less than the library's own call.
TEST(LibraryCoder, OneGeneratedKernelRunsDirectlyOneLibraryCallReplays) {
  auto relu = fixtureCandidate("01_relu");
  ASSERT_TRUE(relu.ok()) << relu.error().message;
  EXPECT_EQ(relu.value().cuda.find("cudaStreamBeginCapture"), std::string::npos);
  auto c = fixtureCandidate("72_linear_relu");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NE(c.value().cuda.find("cudaStreamBeginCapture"), std::string::npos);
  EXPECT_NE(c.value().cuda.find("CUBLASLT_EPILOGUE_RELU_BIAS"), std::string::npos);
  EXPECT_NE(c.value().cuda.find(", 1, CUBLASLT_EPILOGUE_RELU_BIAS, CUBLAS_COMPUTE_32F};"), std::string::npos)
      << "bias, the relu epilogue; fp32, not TF32";
}

// A fused epilogue is named only in the shape of a call that applies one, so that reading the
// source (the rubric's CUDA engineering) finds fusion only where there is some.
TEST(LibraryCoder, APlainMatmulNamesNoFusedEpilogue) {
  auto c = fixtureCandidate("54_matmul_square");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& cu = c.value().cuda;
  EXPECT_NE(cu.find("CUBLASLT_EPILOGUE_DEFAULT"), std::string::npos);
  for (const char* fused : {"EPILOGUE_RELU", "EPILOGUE_GELU", "EPILOGUE_BIAS"})
    EXPECT_EQ(cu.find(fused), std::string::npos) << fused;
}

TEST(LibraryCoder, SequentialChildrenAreNamedByStringNotAsAttributes) {
  auto c = fixtureCandidate("87_conv_bn_relu_stem");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& py = c.value().python;
  EXPECT_NE(py.find("self.block1 = ConvBNReLU(3, 32, stride=2)"), std::string::npos) << py;  // Model's own construction
  EXPECT_NE(py.find("class ConvBNReLU(nn.Sequential):"), std::string::npos) << py;  // and the helper it uses
  EXPECT_NE(py.find("getattr(self.block1, \"0\").weight"), std::string::npos) << py;
  EXPECT_EQ(py.find("self.block1.0"), std::string::npos) << py;
}

nlohmann::json tensor(const std::string& id, std::vector<int64_t> shape, const std::string& role) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return {{"id", id}, {"shape", shape}, {"strides", strides}, {"dtype", "float32"}, {"role", role}};
}

TEST(GraphNormalize, AddmmBecomesMmThenScaleAndAdd) {
  nlohmann::json g = {{"schema", "stitchcuda.graph/1"},
                      {"tensors", {tensor("t0", {8}, "input"), tensor("t1", {4, 16}, "input"),
                                   tensor("t2", {16, 8}, "input"), tensor("t3", {4, 8}, "intermediate")}},
                      {"nodes", {{{"id", 0}, {"op", "aten::addmm"}, {"kind", "compute"},
                                  {"inputs", {{{"name", "self"}, {"tensor", "t0"}}, {{"name", "mat1"}, {"tensor", "t1"}},
                                              {{"name", "mat2"}, {"tensor", "t2"}}, {{"name", "alpha"}, {"value", 3}}}},
                                  {"outputs", {"t3"}}}}},
                      {"inputs", {"t0", "t1", "t2"}},
                      {"outputs", {"t3"}}};
  auto parsed = parseNormalized(g);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Graph& graph = parsed.value();
  ASSERT_EQ(graph.nodes.size(), 3u);
  EXPECT_EQ(graph.nodes[0].op, "aten::mm");
  EXPECT_EQ(graph.nodes[1].op, "aten::mul.Scalar");
  EXPECT_EQ(graph.nodes[2].op, "aten::add.Tensor");
  EXPECT_EQ(graph.nodes[2].outputs[0], "t3");  // consumers of the addmm still find its result
  const Plan p = makePlan(graph);
  ASSERT_EQ(kinds(p), "G");  // alpha and the row bias both fold into cuBLASLt
  EXPECT_DOUBLE_EQ(p.kernels[0].library->gemm.alpha, 3.0);
  EXPECT_EQ(p.kernels[0].library->gemm.bias->tensorId, "t0");
}

TEST(GraphNormalize, UnsafeViewAndWholeSlicesAreViews) {
  nlohmann::json g = {{"schema", "stitchcuda.graph/1"},
                      {"tensors", {tensor("t0", {4, 8}, "input"), tensor("t1", {4, 8}, "intermediate"),
                                   tensor("t2", {32}, "intermediate")}},
                      {"nodes", {{{"id", 0}, {"op", "aten::slice.Tensor"}, {"kind", "view"},
                                  {"inputs", {{{"name", "self"}, {"tensor", "t0"}}, {{"name", "dim"}, {"value", 0}},
                                              {{"name", "start"}, {"value", 0}}, {{"name", "end"}, {"value", 9223372036854775807LL}}}},
                                  {"outputs", {"t1"}}},
                                 {{"id", 1}, {"op", "aten::_unsafe_view"}, {"kind", "compute"},
                                  {"inputs", {{{"name", "self"}, {"tensor", "t1"}}, {{"name", "size"}, {"value", {32}}}}},
                                  {"outputs", {"t2"}}}}},
                      {"inputs", {"t0"}},
                      {"outputs", {"t2"}}};
  auto parsed = parseNormalized(g);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed.value().nodes[0].op, "aten::view");
  EXPECT_EQ(parsed.value().nodes[1].kind, "view");
  EXPECT_EQ(parsed.value().tensor("t2")->viewOf, std::optional<std::string>("t1"));
}

// The trace's kernels per plan step: a generated kernel names its step; cuDNN's kernels and the
// convolution's epilogue pass belong to the library step before the next generated one.
TEST(LibraryVsEager, TheTraceIsSplitIntoSteps) {
  const Plan p = planOf("81_conv2d_relu_maxpool");
  ASSERT_EQ(kinds(p), "CK");
  const std::vector<loop::Launch> launches = {
      {"sm90_xmma_fprop_implicit_gemm_tf32f32", 180, 0}, {"void sc_conv_epi_pass<4>(float*, long)", 20, 0},
      {"void k1_kernel<4>(float const*, float*, long)", 30, 0}, {"sm90_xmma_fprop_implicit_gemm_tf32f32", 220, 1},
      {"void k1_kernel<4>(float const*, float*, long)", 10, 1}};
  const auto us = stepTimesUs(p, launches, 2);
  ASSERT_EQ(us.size(), 2u);
  EXPECT_DOUBLE_EQ(us.at(0), 210);
  EXPECT_DOUBLE_EQ(us.at(1), 20);
  EXPECT_TRUE(stepTimesUs(p, launches, 0).empty());
}

// Repeats of one kernel run the first's code (emit/SharedKernels.h), so the trace names step 0 for
// steps 2, 4 and 5 (generated, generated, library between): a two-stage kernel is one step until a
// stage of it comes again.
TEST(LibraryVsEager, RepeatsOfASharedKernelAreTheirOwnSteps) {
  Plan p;
  p.kernels.resize(6);
  p.kernels[1].library = p.kernels[3].library = LibraryCall{};
  const std::vector<loop::Launch> launches = {
      {"void k0_s0_kernel<4>()", 1, 0}, {"void k0_s1_kernel<4>()", 2, 0}, {"cudnn_a", 10, 0},
      {"void k0_s0_kernel<4>()", 3, 0}, {"void k0_s1_kernel<4>()", 4, 0}, {"cudnn_b", 20, 0},
      {"void k0_s0_kernel<1>()", 5, 0}, {"void k0_s1_kernel<1>()", 6, 0},
      {"void k0_s0_kernel<4>()", 7, 0}, {"void k0_s1_kernel<4>()", 8, 0}};
  const auto us = stepTimesUs(p, launches, 1);
  ASSERT_EQ(us.size(), 6u);
  EXPECT_DOUBLE_EQ(us.at(0), 3);
  EXPECT_DOUBLE_EQ(us.at(1), 10);
  EXPECT_DOUBLE_EQ(us.at(2), 7);
  EXPECT_DOUBLE_EQ(us.at(3), 20);
  EXPECT_DOUBLE_EQ(us.at(4), 11);
  EXPECT_DOUBLE_EQ(us.at(5), 15);
}

// Two library steps with no generated kernel between them: their kernels are not told apart.
TEST(LibraryVsEager, AdjacentLibraryStepsAreNotTimedApart) {
  Plan p;
  p.kernels.resize(3);
  p.kernels[0].library = p.kernels[1].library = LibraryCall{};
  const auto us = stepTimesUs(p, {{"cudnn_kernel", 5, 0}, {"cudnn_kernel", 5, 0}, {"void k2_kernel<1>()", 3, 0}}, 1);
  EXPECT_EQ(us.size(), 1u);
  EXPECT_DOUBLE_EQ(us.at(2), 3);
}

// A convolution step slower than eager's whole line (conv, relu and pool on line 16) by more than
// the margin is reported, with the node to leave to PyTorch; within the margin, without the
// line's time, or with a library step on its line the trace did not time, it is not.
TEST(LibraryVsEager, AConvolutionSlowerThanEagersLineIsFound) {
  auto g = loadFixture("81_conv2d_relu_maxpool");
  ASSERT_TRUE(g.ok());
  const Plan p = makePlan(g.value());
  const std::map<std::size_t, double> us = {{0, 120.0}, {1, 5.0}};
  const auto slow = slowerThanEager(g.value(), p, {{16, 100.0}}, us);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].steps, std::vector<std::size_t>{0});
  EXPECT_EQ(slow[0].nodes, std::vector<int>{p.kernels[0].library->nodeIds.front()});
  EXPECT_NE(slow[0].reason().find("(step k0) took 120.0 us per forward where eager's whole line(s) 16 took 100.0 us"),
            std::string::npos)
      << slow[0].reason();
  EXPECT_TRUE(slowerThanEager(g.value(), p, {{16, 110.0}}, us).empty());
  EXPECT_TRUE(slowerThanEager(g.value(), p, {{15, 10.0}}, us).empty());
  EXPECT_TRUE(slowerThanEager(g.value(), p, {{16, 100.0}}, {{1, 5.0}}).empty());
}

// Convolutions a Sequential runs on one line of the forward are judged together against that line.
TEST(LibraryVsEager, ConvolutionsOfOneLineAreJudgedTogether) {
  auto g = loadFixture("88_resnet_basic_block");
  ASSERT_TRUE(g.ok());
  Graph oneLine = g.value();
  for (Node& n : oneLine.nodes)
    if (n.source) n.source->line = 20;
  const Plan p = makePlan(oneLine);
  std::map<std::size_t, double> us;
  std::vector<std::size_t> convSteps;
  for (std::size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].library) us[i] = 60.0, convSteps.push_back(i);
  ASSERT_EQ(convSteps.size(), 2u);
  const auto slow = slowerThanEager(oneLine, p, {{20, 100.0}}, us);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].steps, convSteps);
  EXPECT_EQ(slow[0].nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(slow[0].oursUs, 120.0);
  EXPECT_NE(slow[0].reason().find("the cuDNN calls of its line(s) (steps k"), std::string::npos) << slow[0].reason();
  us.erase(convSteps[1]);  // one of them not timed: the line is not judged
  EXPECT_TRUE(slowerThanEager(oneLine, p, {{20, 100.0}}, us).empty());
}

}  // namespace
}  // namespace stitch::agents::builtin
