// Pins what the built-in Coder writes for the new kernel shapes: the ABI's dtypes, the index
// and bool outputs, the split reduction's static buffers, the scan in fp64, PyTorch's pooling
// and NaN semantics, and the ModelNew that mirrors the reference's state_dict.
#include "FixtureGraphs.h"
#include "agents/builtin/lower/KernelBuilder.h"

#include <fstream>
#include <regex>
#include <set>

#include <gtest/gtest.h>

namespace stitch::agents::builtin {
namespace {

std::string cudaOf(const std::string& fixture) {
  auto c = testing::fixtureCandidate(fixture);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? c.value().cuda : "";
}

// The candidate with its convolutions channels-last in eager's TF32 (generate_candidates'
// FIXTURE.channels_last).
std::string channelsLastCudaOf(const std::string& fixture) {
  PlannerOptions o;
  o.convTf32 = o.matmulTf32 = true;
  o.precisionWhy = PrecisionWhy::Eager;
  o.layout = LayoutMode::ChannelsLast;
  auto c = testing::fixtureCandidate(fixture, o);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? c.value().cuda : "";
}

std::string pythonOf(const std::string& fixture) {
  auto c = testing::fixtureCandidate(fixture);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? c.value().python : "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Coder, ArgmaxWritesInt64IndicesAndChecksTheirDtype) {
  const std::string cu = cudaOf("31_argmax_lastdim");
  EXPECT_TRUE(has(cu, "ArgReduce<true>"));
  EXPECT_TRUE(has(cu, "long long* out0"));
  EXPECT_TRUE(has(cu, "kDtype0[] = {0, 5}"));  // float32 input, int64 output
  EXPECT_TRUE(has(pythonOf("31_argmax_lastdim"), "dtype=torch.int64"));
}

// clamp.Tensor: both bounds, either alone, each a broadcast tensor; generated_on_cpu.py runs it.
TEST(Coder, ClampWithTensorBoundsIsGenerated) {
  const std::string cu = cudaOf("clamp_tensor_bounds");
  EXPECT_TRUE(has(cu, "sc_min(sc_max("));
  EXPECT_TRUE(has(pythonOf("clamp_tensor_bounds"), "STITCH_PYTORCH_OPS = {}"));
}

// triu/tril by the element's coordinates: col - row against the diagonal; generated_on_cpu.py runs it.
TEST(Coder, TriangularMasksAreGeneratedFromCoordinates) {
  const std::string cu = cudaOf("triangle_mask");
  EXPECT_TRUE(has(cu, " >= (int64_t)0LL ? "));   // triu
  EXPECT_TRUE(has(cu, " <= (int64_t)-1LL ? "));  // tril, diagonal -1
  EXPECT_TRUE(has(cu, " >= (int64_t)2LL ? "));   // triu, diagonal 2
  EXPECT_TRUE(has(pythonOf("triangle_mask"), "STITCH_PYTORCH_OPS = {}"));
}

// An argument the task leaves at its default (level3/35_LSTM's `h0=None`) keeps the default in
// ModelNew's signature and is checked against it; a default that is not a literal is refused.
Outcome<CandidateSource> withSignature(const std::string& signature) {
  auto g = testing::loadFixture("pad_constant");
  if (!g) return g.error();
  auto f = findForward("class Model(nn.Module):\n    def forward(" + signature + "):\n        return x\n");
  if (!f) return f.error();
  return generateCandidate(g.value(), makePlan(g.value(), {}, {}), f.value(), Variant{}, "pad_constant");
}

// Kernels the same but for their names are compiled once (SharedKernels.h): the attention's two
// identical row kernels are one block, whose marker names both launchers, and the repeat's launcher
// runs the first's kernel.
TEST(Coder, ARepeatedKernelIsCompiledOnceWithALauncherPerStep) {
  auto c = testing::fixtureCandidate("sdpa_attention");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& cu = c.value().cuda;
  const std::regex shared(R"(// stitch:kernel launch_(k\d+) launch_(k\d+)\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cu, m, shared));
  const std::string first = m[1], repeat = m[2];
  EXPECT_NE(cu.find(first + "_kernel(const"), std::string::npos);
  EXPECT_EQ(cu.find(repeat + "_kernel"), std::string::npos);
  const std::size_t launcher = cu.find("static int launch_" + repeat + "(");
  ASSERT_NE(launcher, std::string::npos);
  EXPECT_NE(cu.find(first + "_kernel<4><<<", launcher), std::string::npos);
  EXPECT_LT(launcher, cu.find("// stitch:kernel-end", m.position(0)));
}

TEST(Coder, ArgumentsLeftAtTheirDefaultKeepItAndAreChecked) {
  auto c = withSignature("self, x, h0=None, scale: float = 2.0,\n            mode='a'");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().python, "def forward(self, x, h0=None, scale=2.0, mode='a'):"));
  EXPECT_TRUE(has(c.value().python, "if h0 is not None:\n"));
  EXPECT_TRUE(has(c.value().python, "if scale != 2.0:\n"));
  EXPECT_TRUE(has(c.value().python, "if mode != 'a':\n"));
  // The accepted edit runs the original forward for another value instead of raising.
  auto g = testing::loadFixture("pad_constant");
  auto f = findForward("class Model(nn.Module):\n    def forward(self, x, h0=None):\n        return x\n");
  ASSERT_TRUE(g.ok() && f.ok());
  const std::string edit = forwardReplacement(g.value(), makePlan(g.value()), f.value(), {"k", "m.cu"});
  EXPECT_TRUE(has(edit, "    route = \"original\" if h0 is not None else program.route(x=x)\n")) << edit;
  auto expr = withSignature("self, x, h0=torch.zeros(3)");
  ASSERT_FALSE(expr.ok());
  EXPECT_TRUE(has(expr.error().message, "h0 defaults to torch.zeros(3), which is not a literal"));
  auto missing = withSignature("self, x, y");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(has(missing.error().message, "y has no default"));
}

// A forward written on one line is its own body: the edit replaces that line, beginning with the def
// up to its colon, and keeps the statement as the original forward below the compiled path.
TEST(ForwardSource, AOneLineForwardIsItsOwnBody) {
  auto f = findForward("class Model(nn.Module):\n    def forward(self, x,\n                h0=None) -> torch.Tensor: return x * 2  # doubled\n\n"
                       "def get_inputs():\n    return []\n");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f.value().params, (std::vector<std::string>{"x", "h0"}));
  EXPECT_EQ(f.value().defLine, 2);
  EXPECT_EQ(f.value().bodyFirst, 3);
  EXPECT_EQ(f.value().bodyLast, 3);
  EXPECT_EQ(f.value().body, "        return x * 2  # doubled\n");
  EXPECT_EQ(f.value().header, "                h0=None) -> torch.Tensor:\n");
  auto g = testing::loadFixture("pad_constant");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::string edit = forwardReplacement(g.value(), makePlan(g.value()), f.value(), {"k", "m.cu"});
  EXPECT_TRUE(edit.starts_with("                h0=None) -> torch.Tensor:\n        # StitchCUDA: ")) << edit;
  EXPECT_TRUE(edit.ends_with("        return x * 2  # doubled\n")) << edit;
  // A comment after the colon is no body: the lines below are.
  auto commented = findForward("class Model(nn.Module):\n    def forward(self, x):  # one line\n        return x\n");
  ASSERT_TRUE(commented.ok()) << commented.error().message;
  EXPECT_EQ(commented.value().header, "");
  EXPECT_EQ(commented.value().body, "        return x\n");
}

// Constant padding loads only inside the padded tensor and fills the rest; generated_on_cpu.py runs it.
TEST(Coder, ConstantPaddingLoadsOnlyInsideThePaddedTensor) {
  const std::string cu = cudaOf("pad_constant");
  EXPECT_TRUE(has(cu, " : (0.5f))"));
  EXPECT_TRUE(has(cu, "_3 < (int64_t)5LL"));  // the last dim's coordinate against the input's size
  EXPECT_TRUE(has(pythonOf("pad_constant"), "STITCH_PYTORCH_OPS = {}"));
}

TEST(Coder, AnyAllWriteBool) {
  const std::string cu = cudaOf("34_any_all");
  EXPECT_TRUE(has(cu, "bool* out0"));
  EXPECT_TRUE(has(cu, "kDtype0[] = {0, 7, 7}"));
  EXPECT_TRUE(has(pythonOf("34_any_all"), "dtype=torch.bool"));
}

TEST(Coder, ScansAccumulateInDouble) {
  const std::string cu = cudaOf("35_cumsum_lastdim");
  EXPECT_TRUE(has(cu, "blockExclusiveScan<ScanSum>"));
  EXPECT_TRUE(has(cudaOf("36_cumprod_dim1"), "double acc = ScanProd::identity()"));
}

// A row scan stages each tile through shared memory (coalesced loads and stores, each thread
// scanning consecutive items); its items per thread follow the variant's, 4 each.
TEST(Coder, ARowScanStagesItsTilesAndTakesFourElementsPerItemOfTheVariant) {
  const std::string cu = cudaOf("35_cumsum_lastdim");
  EXPECT_TRUE(has(cu, "constexpr int kThreads = 256, kItems = 4;"));
  EXPECT_TRUE(has(cu, "const int p = l * kThreads + threadIdx.x;"));  // striped: a warp's neighbours
  EXPECT_TRUE(has(cu, "stage[p + p / 16] = (double)"));
  auto laid = testing::fixtureLaidOut("35_cumsum_lastdim");
  ASSERT_TRUE(laid.ok()) << laid.error().message;
  auto f = testing::fixtureForward(laid.value().graph);
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto c = generateCandidate(laid.value().graph, laid.value().plan, f.value(), Variant{128, 4, 4}, "35_cumsum_lastdim");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().cuda, "constexpr int kThreads = 128, kItems = 16;"));
}

TEST(Coder, AFullReductionSplitsAcrossBlocksWithALastBlockCombine) {
  const std::string cu = cudaOf("48_mse_loss");
  EXPECT_TRUE(has(cu, "__device__ unsigned int k0_count[1]"));
  EXPECT_TRUE(has(cu, "atomicAdd(&k0_count[row], 1u)"));
  EXPECT_TRUE(has(cu, "k0_count[row] = 0u"));  // reset for the next launch
}

// Instance norm over 1024 rows of 16384: too long for a warp, enough rows to fill the GPU unsplit.
TEST(Coder, ManyRowsKeepOneBlockPerRow) {
  const std::string cu = cudaOf("44_instance_norm");
  EXPECT_FALSE(has(cu, "_count["));
  EXPECT_TRUE(has(cu, "row += gridDim.x"));
  // The stride is the launch's block as a constant, so the loads of four chunks unroll.
  EXPECT_TRUE(has(cu, "#pragma unroll 4\n    for (int64_t c = threadIdx.x; c < (int64_t)16384LL / VEC; c += (int64_t)256LL)"));
}

TEST(Coder, ShortRowsTakeAWarpEachAndCombineByShufflesAlone) {
  // argmax over [16384, 1024]: eight rows per block of 256 threads, no barrier.
  const std::string cu = cudaOf("31_argmax_lastdim");
  EXPECT_TRUE(has(cu, "row = blockIdx.x * (int64_t)8LL + (threadIdx.x >> 5)"));
  EXPECT_TRUE(has(cu, "warpArgReduce<true>(acc1, acci1)"));
  EXPECT_TRUE(has(cu, "if (lane == 0) out0[row] = idx1"));
  EXPECT_TRUE(has(cu, "k0_kernel<4><<<2048, 256, 0, stream>>>"));
  EXPECT_FALSE(has(cu, "__syncthreads();\n    const float red"));
  EXPECT_FALSE(has(cu, "blockArgReduce<true>(acc"));
}

TEST(Coder, FewLongRowsWithDependentReductionsRunAsStagesOfSplitRows) {
  // group norm over [16,64,128,128]: 128 rows of 131072. The mean and the squared deviations
  // from it in one stage (Welford's moments over 5 blocks per row, merged by the row's last
  // block), then the normalized output.
  const std::string cu = cudaOf("43_group_norm");
  EXPECT_TRUE(has(cu, "__device__ float k0_red[256]"));
  EXPECT_TRUE(has(cu, "k0_s0_kernel<4><<<640, 256, 0, stream>>>(in0, in1, in2, out0);\n"
                      "    k0_s1_kernel<4><<<640, 256, 0, stream>>>(in0, in1, in2, out0);\n  } else {"));
  EXPECT_TRUE(has(cu, "p1 = Moments::merge(p1, Moments::load(&k0_fpart1[row * (int64_t)5LL + q]));"));
  EXPECT_TRUE(has(cu, "if (threadIdx.x == 0) k0_red[row * (int64_t)2LL + 1] = p1r.m2;"));
  // The writing stage reads the statistics its predecessor left.
  EXPECT_TRUE(has(cu, "const float red6 = k0_red[row * (int64_t)2LL + 1];"));
  EXPECT_TRUE(has(cu, "for (int64_t c = split * (int64_t)256LL + threadIdx.x; c < (int64_t)131072LL / VEC; c += (int64_t)1280LL)"));
}

TEST(Coder, SoftmaxReadsARowItHoldsInRegistersOnce) {
  // softmax over [8192, 4096]: a block per row, 16 floats a thread held in registers; one pass
  // takes the online max and rescaled sum of exponentials, and the write reads the registers.
  const std::string cu = cudaOf("24_softmax");
  EXPECT_TRUE(has(cu, "struct MaxExpSum {"));
  EXPECT_TRUE(has(cu, "float C0[kCached][VEC];"));
  EXPECT_TRUE(has(cu, "st1.pushAll<VEC>(X);"));  // one exponential per element, the sum rescaled as the max grows
  EXPECT_TRUE(has(cu, "const MaxExpSum st1r = blockMerge(st1, mscratch);"));
  EXPECT_TRUE(has(cu, "const float v5 = (v3 / st1r.s);"));
  std::size_t loads = 0;
  for (std::size_t at = cu.find("in0 + base"); at != std::string::npos; at = cu.find("in0 + base", at + 1)) ++loads;
  EXPECT_EQ(loads, 1u);
}

TEST(Coder, KernelsThatFoldNothingKeepTheirPrelude) {
  EXPECT_FALSE(has(cudaOf("19_sum_lastdim"), "struct MaxExpSum"));
  EXPECT_FALSE(has(cudaOf("01_relu"), "struct Moments"));
}

TEST(Coder, AColumnReductionSplitsTheReducedDimOverRowGroupsCombinedInOrder) {
  // argmin over dim 1 of [64, 1024, 256]: 16384 outputs, 32 per block, 8 row groups of 128 rows.
  const std::string cu = cudaOf("32_argmin_dim1");
  EXPECT_TRUE(has(cu, "__shared__ long long cparti[8][32];"));
  EXPECT_TRUE(has(cu, "for (int64_t c = live ? ty : (int64_t)1024LL; c < (int64_t)1024LL; c += 8)"));
  // Each row group scans its rows in order from its first: a step compares no indices. Its
  // partial meets the others' through the full comparison. The NaN rule is checked by number on
  // the CPU (generated_on_cpu.py plants NaNs: 32_argmin_dim1, column_reductions, split_columns).
  EXPECT_TRUE(has(cu, "long long acci1 = ty;"));
  EXPECT_TRUE(has(cu, "ArgOp<false>::step(acc1, acci1, v0, c);"));
  EXPECT_TRUE(has(cu, "for (int g = 1; g < 8; ++g) ArgOp<false>::apply(acc1, acci1, cpart[g][tx], cparti[g][tx]);"));
  EXPECT_TRUE(has(cu, "k0_kernel<1><<<512, 256, 0, stream>>>"));
  // Lanes past the last column read in bounds and write nothing.
  EXPECT_TRUE(has(cu, "if (live && ty == 0)"));
}

// A short row takes a few lanes of a warp: the minimum over the 128 channels of the NHWC
// convolution output is 32 chunks of 16 bytes, eight lanes a row and four rows a warp, stepping
// together; the lanes past the last row store nothing. Its indices unused, it is a plain minimum.
// Checked by number on the CPU with the rows of other lengths (generated_on_cpu.py: row_folds,
// cross_entropy, triplet_rows, training_batch_norm).
TEST(Coder, ShortRowsShareAWarp) {
  const std::string cu = channelsLastCudaOf("97_conv2d_min_tanh_tanh");
  EXPECT_TRUE(has(cu, "const int lane = threadIdx.x & 7;"));
  EXPECT_TRUE(has(cu, "const int64_t mine = first + ((threadIdx.x & 31) >> 3);"));
  EXPECT_TRUE(has(cu, "for (int64_t c = lane; c < (int64_t)128LL / VEC; c += (int64_t)8LL)"));
  EXPECT_TRUE(has(cu, "const float red3 = warpReduce<MinOp, 8>(acc3);"));
  EXPECT_TRUE(has(cu, "if (lane == 0 && live) out0[row] = "));
  EXPECT_TRUE(has(cu, "sc_blocks((rows * (int64_t)4096LL), 32, 1073741824)"));
  EXPECT_FALSE(has(cu, "ArgOp<false>::apply"));
  // max with its indices read keeps them (and a row of 1024 floats keeps a whole warp).
  EXPECT_TRUE(has(cudaOf("33_max_with_indices"), "ArgOp<true>::apply"));
  // The bias, broadcast along the row, is read at the row's offset plus the element's place.
  EXPECT_TRUE(has(cu, "const int64_t rb1 = k3_off1(rowBase);"));
  EXPECT_TRUE(has(cu, "in1[rb1 + ((lin) - rowBase)]"));
}

// A softmax over 32 channels of an NHWC activation, written NCHW by its row kernel: the row's
// output offset once, each element at the channel stride (240 = 12 x 20 pixels) from it, no
// offset function per element. Checked by number on the CPU (conv_on_cpu.py: channel_softmax).
TEST(Coder, ARowWrittenAcrossItsLayoutStepsFromTheRowsOffset) {
  const std::string cu = channelsLastCudaOf("channel_softmax");
  EXPECT_TRUE(has(cu, "const int lane = threadIdx.x & 1;"));
  EXPECT_TRUE(has(cu, "const int64_t ob0 = k3_ooff0(rowBase);"));
  EXPECT_TRUE(has(cu, "out0[ob0 + ((base + l) - rowBase) * (int64_t)240LL] = O0[l];"));
  EXPECT_FALSE(has(cu, "out0[k3_ooff0("));
}

// An instance norm over the H x W planes of an NCHW activation: rows over two reduced dims. The
// convolution's bias, constant along the plane, is read at the row's offset, not through the
// offset function's three int64 divisions per element. Checked by number on the CPU
// (conv_on_cpu.py: 100_conv2d_instance_norm_divide, norm_tiles).
TEST(Coder, ARowOverSeveralDimsReadsItsBiasAtTheRowsOffset) {
  const std::string cu = cudaOf("100_conv2d_instance_norm_divide");
  EXPECT_TRUE(has(cu, "const int64_t rb1 = k1_off1(rowBase);"));
  EXPECT_TRUE(has(cu, "const float v1 = in1[rb1];"));
  EXPECT_FALSE(has(cu, "in1[k1_off1(lin)]"));
}

// Instance norms over the 400 and 64 pixels of NHWC activations (72 images x 128 channels: column
// kernels, a column per image and channel), written NCHW: each column block computes tiles of 32
// pixels of its 32 columns into shared memory and writes every column's 32 pixels with neighbouring
// lanes, the element's offset its column's plus its pixel's; the bias, constant along the pixels,
// is read at its column's offset, not through the offset function per element. Checked by number
// on the CPU (conv_on_cpu.py: norm_tiles.channels_last, 100_conv2d_instance_norm_divide.channels_last).
TEST(Coder, ColumnsWrittenAcrossTheirOrderMoveThroughTiles) {
  const std::string cu = channelsLastCudaOf("norm_tiles");
  EXPECT_TRUE(has(cu, "__shared__ float tile0[32][33];"));
  EXPECT_TRUE(has(cu, "for (int64_t c0 = (int64_t)0; c0 < (int64_t)400LL; c0 += 32) {"));
  EXPECT_TRUE(has(cu, "const int64_t rowOff0 = k3_ooff0((c0 + tx) * (int64_t)128LL);"));
  EXPECT_TRUE(has(cu, "out0[colOff0[kk] + rowOff0] = tile0[tx][ty + 8 * kk];"));
  EXPECT_FALSE(has(cu, "out0[k3_ooff0(lin)]"));
  // The 64-pixel norm holds its column in registers: the tile loop unrolls, so they stay registers.
  EXPECT_TRUE(has(cu, "const int k = (int)(c0 / 8) + kk;"));
  EXPECT_TRUE(has(cu, "const int64_t cb1 = k3_off1(lin); (void)cb1;"));
  EXPECT_TRUE(has(cu, "const float v1 = in1[cb1];"));
  EXPECT_FALSE(has(cu, "in1[k3_off1(lin)]"));
}

// A training batch norm's normalization over an NHWC activation, written NCHW, runs over tiles
// (TiledTranspose): its four per-channel tensors are read at the tile's offset stepped by the
// channel, not through their offset functions per element. Checked by number on the CPU
// (conv_on_cpu.py: norm_tiles.channels_last).
TEST(Coder, ATiledKernelStepsItsReadsFromTheTilesOffset) {
  const std::string cu = channelsLastCudaOf("norm_tiles");
  EXPECT_TRUE(has(cu, "const int64_t tb1 = k14_off1(lin0);"));
  EXPECT_TRUE(has(cu, "const float v1 = in1[tb1 + b];"));
  EXPECT_FALSE(has(cu, "in1[k14_off1(lin)]"));
}

// mean over dim 1 of [64, 256, 2048]: 131072 outputs, enough for 1024 blocks of 128 columns, so each
// thread takes four (32 apart) and has four independent loads per row step; the values are checked
// by number on the CPU (generated_on_cpu.py: column_reductions, 20_mean_dim1).
TEST(Coder, AColumnReductionOverManyColumnsGivesEachThreadFour) {
  const std::string cu = cudaOf("20_mean_dim1");
  EXPECT_TRUE(has(cu, "__shared__ float cpart[8][128];"));
  EXPECT_TRUE(has(cu, "const int64_t t = min(t0 + tx + 32 * j, (int64_t)131072LL - 1);"));
  EXPECT_TRUE(has(cu, "acc1[j] = SumOp::apply(acc1[j], v0);"));
  EXPECT_TRUE(has(cu, "k0_kernel<1><<<1024, 256, 0, stream>>>"));
  // argmin over [64, 1024, 256] has 16384 outputs: four a thread would leave 128 blocks; it keeps one.
  EXPECT_FALSE(has(cudaOf("32_argmin_dim1"), "first[j]"));
  // An arg-reduction keeps one column a thread however many columns (measured slower with four),
  // while the sum beside it over as many columns takes four.
  const std::string both = cudaOf("column_reductions");
  EXPECT_TRUE(has(both, "first[j]"));
  EXPECT_FALSE(has(both, "[j], acci"));
}

// Columns too few to fill the GPU split the reduced dim over blocks, combined in a fixed order by
// each column block's last block: BatchNorm1d in training over [3001, 48] (two column blocks) is a
// kernel for its moments (one Welford pass, though its mean and its squared deviations each read
// the input as a value of their own) and one that normalizes, 11 parts each; the sum and the argmax beside it are
// one kernel each. Checked by number on the CPU (generated_on_cpu.py: split_columns). Columns enough
// for more blocks than SMs are not split (20_mean_dim1, 32_argmin_dim1 keep one kernel).
TEST(Coder, FewColumnsSplitTheReducedDimOverBlocks) {
  const std::string cu = cudaOf("split_columns");
  EXPECT_TRUE(has(cu, "k1_s0_kernel<1><<<22, 256, 0, stream>>>"));
  EXPECT_TRUE(has(cu, "k1_s1_kernel<1><<<22, 256, 0, stream>>>"));
  EXPECT_FALSE(has(cu, "k1_s2_kernel"));
  EXPECT_TRUE(has(cu, "Moments st"));
  EXPECT_TRUE(has(cu, "cEnd = min(cBegin + (int64_t)273LL, (int64_t)3001LL);"));
  EXPECT_TRUE(has(cu, "for (int64_t q = ty; q < (int64_t)11LL; q += 8)"));
  EXPECT_TRUE(has(cu, "if (live && ty == 0 && part == 0) {"));
  EXPECT_TRUE(has(cu, "k2_kernel<1><<<22, 256, 0, stream>>>"));
  EXPECT_TRUE(has(cu, "k3_parti["));
  EXPECT_TRUE(has(cu, "long long acci1 = cBegin + ty;"));
  EXPECT_FALSE(has(cudaOf("32_argmin_dim1"), "cBegin"));
  EXPECT_FALSE(has(cudaOf("20_mean_dim1"), "cBegin"));
}

// Independent reductions over the same rows accumulate in one loop, each input loaded once: the
// triplet loss's two distances, in a block per row and in rows split over blocks. Checked by number
// on the CPU (generated_on_cpu.py: triplet_rows).
TEST(Coder, IndependentRowReductionsShareOneLoop) {
  const std::string cu = cudaOf("triplet_rows");
  EXPECT_TRUE(has(cu, "        acc7 = SumOp::apply(acc7, v6);\n        acc16 = SumOp::apply(acc16, v15);\n"));
  EXPECT_TRUE(has(cu, "      acc7 = SumOp::apply(acc7, v6);\n      acc16 = SumOp::apply(acc16, v15);\n"));
  EXPECT_TRUE(has(cu, "k2_part[(row * (int64_t)4LL + split) * (int64_t)2LL + 1] = red16;"));
}

// A row read once, of up to 4096 elements, takes a warp where the rows are many (LaunchShape.h's
// warpPerRow): logsumexp over 4400 rows of 4096, and two reductions over ragged rows of 2050, eight
// rows a block of 256, merged by shuffles alone. Few rows keep a block each (triplet_rows' 6).
// Checked by number on the CPU (generated_on_cpu.py: warp_rows).
TEST(Coder, LongRowsReadOnceTakeAWarpEachWhereTheyAreMany) {
  const std::string cu = cudaOf("warp_rows");
  EXPECT_TRUE(has(cu, "const MaxExpSum st1r = warpMerge(st1);"));
  EXPECT_TRUE(has(cu, "#pragma unroll 8\n    for (int64_t c = lane; c < (int64_t)4096LL / VEC; c += (int64_t)32LL)"));
  EXPECT_TRUE(has(cu, "const unsigned int grid4 = sc_blocks(rows, 8, 1073741824);"));
  EXPECT_FALSE(has(cu, "blockMerge(st1"));
  EXPECT_FALSE(has(cu, "blockReduce<"));
  EXPECT_TRUE(has(cudaOf("triplet_rows"), "blockReduce<SumOp>"));
}

TEST(Coder, MaxPoolingLetsNaNWinAndSkipsPadding) {
  const std::string cu = cudaOf("37_max_pool2d");
  EXPECT_TRUE(has(cu, "if (v > m || v != v) m = v;"));
  EXPECT_TRUE(has(cu, "continue;"));
}

TEST(Coder, AvgPoolingDividesByTheClippedWindowWithoutPadding) {
  const std::string cu = cudaOf("38_avg_pool2d");
  EXPECT_TRUE(has(cu, "return sum / (float)(1 * (e0 - s0) * (e1 - s1));"));
  EXPECT_TRUE(has(cudaOf("40_avg_pool3d"), "return sum / (float)(pool);"));
}

TEST(Coder, MaxReductionsPropagateNaN) {
  EXPECT_TRUE(has(cudaOf("21_amax_lastdim"), "warpReduce<MaxOp>"));
  EXPECT_TRUE(has(cudaOf("21_amax_lastdim"), "(a > b || a != a) ? a : b"));
}

// With fewer than 32 warps, the last warp's idle lanes must add nothing: padding them with warp 0's
// partial counted it 25 times in a 256-thread row sum (seen on the GPU: 19_sum_lastdim off by 2e3,
// when its rows took a block each).
TEST(Coder, BlockSumPadsIdleLanesWithTheIdentity) {
  const std::string cu = cudaOf("27_rms_norm");
  EXPECT_TRUE(has(cu, "blockReduce<SumOp>"));
  EXPECT_TRUE(has(cu, "lane < warps ? scratch[lane] : Op::identity()"));
}

// ModelNew constructs itself as Model does (the task's __init__, its imports and constants), so the
// same seed gives the same parameters and buffers, num_batches_tracked included, with nothing copied.
TEST(Coder, BatchNormModelNewConstructsItselfAsTheReferenceDoes) {
  const std::string py = pythonOf("42_batch_norm_eval");
  EXPECT_TRUE(has(py, "class ModelNew(nn.Module):\n    def __init__(self")) << py;
  EXPECT_TRUE(has(py, "nn.BatchNorm2d(")) << py;
  EXPECT_TRUE(has(py, "self.bn.running_mean")) << py;
  EXPECT_FALSE(has(py, "register_buffer")) << py;
  EXPECT_FALSE(has(py, "super(Model")) << py;
}

// A result that is a view of what a kernel writes is returned as that view of the buffer (a batched
// matmul's [32·512, 1024] product seen as [32, 512, 1024]).
TEST(Coder, ReturnsTheViewOfItsBuffer) {
  EXPECT_TRUE(has(pythonOf("59_matmul_broadcast"), "return out0.view((32, 512, 1024))"));
}

// Instance norm (ATen's batch norm over a [1, N·C, ...] view) is a norm over the spatial dims of its
// own input: one kernel with the convolution's bias before it and the division after it, no view of
// a [1, N·C, ...] buffer, and any batch size.
TEST(Coder, InstanceNormIsOneRowKernelWithItsNeighbours) {
  const std::string py = pythonOf("100_conv2d_instance_norm_divide");
  EXPECT_TRUE(has(py, "STITCH_ANY_ROWS = True")) << py;
  EXPECT_FALSE(has(py, ".view(")) << py;
  const std::string cu = cudaOf("100_conv2d_instance_norm_divide");
  EXPECT_TRUE(has(cu, "k1_kernel")) << cu;
  EXPECT_FALSE(has(cu, "k2_kernel")) << "bias, statistics, normalization and division in one kernel";
}

TEST(Coder, ReplanCandidatesGenerateForEveryFixture) {
  for (const auto& name : testing::fixtureNames()) {
    auto c = testing::fixtureCandidate(name, PlannerOptions{false});
    EXPECT_TRUE(c.ok()) << name << ": " << (c.ok() ? "" : c.error().message);
  }
}

// A forward with operators the brain does not generate still gets a candidate: the compiled
// segments run between them, and the operators left in PyTorch are issued as captured and declared.
// The accepted edit runs the program from the workspace's kernels folder where the inputs are
// those it was generated for, and keeps the user's own forward below it for other shapes.
TEST(PartialCandidate, AcceptedEditImportsTheProgramAndKeepsTheOriginalForward) {
  auto g = testing::loadFixture("partial_sort");
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto f = testing::fixtureForward(g.value());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const std::string text = forwardReplacement(g.value(), makePlan(g.value()), f.value(), {"my_kernels", "partial_sort.cu"});
  EXPECT_TRUE(has(text, "        from my_kernels import load_program\n")) << text;
  EXPECT_TRUE(has(text, "load_program(\"partial_sort.cu\", {\"x\": (\"float32\", (2, 3, 8, 8), (192, 64, 8, 1))}, batch=2)"))
      << text;
  EXPECT_TRUE(has(text, "    def compiled(x):\n            ")) << text;
  EXPECT_TRUE(has(text, "    route = program.route(x=x)\n        if route == \"program\":\n            return compiled(x=x)\n"))
      << text;
  EXPECT_TRUE(has(text, "            program.segment(1, ")) << text;
  EXPECT_FALSE(has(text, "stitchcuda_harness"));
  // The original body, verbatim, after the compiled path.
  EXPECT_TRUE(text.ends_with(f.value().body)) << text;
  EXPECT_TRUE(has(f.value().body, "x = torch.sort(x, dim=3).values"));
}

// Where the capture found every row computed from itself alone, the program serves other batch
// sizes in chunks of the generated rows; not where it writes module state (running statistics).
TEST(PartialCandidate, IndependentRowsServeOtherBatchSizesInChunks) {
  auto g = testing::loadFixture("partial_sort");
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto f = testing::fixtureForward(g.value());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const Graph& rows = g.value();
  ASSERT_EQ(rows.independentRows.value_or(0), 2);  // the capture's batch probe
  const std::string text = forwardReplacement(rows, makePlan(rows), f.value(), {"my_kernels", "partial_sort.cu"});
  EXPECT_TRUE(has(text, "(192, 64, 8, 1))}, batch=2)\n")) << text;
  EXPECT_TRUE(has(text, "        if route == \"chunks\":\n            return program.in_chunks(compiled, x=x)\n")) << text;
  // Once timed, the loader weighs chunks with the measured speedup.
  EXPECT_TRUE(has(forwardReplacement(rows, makePlan(rows), f.value(), {"my_kernels", "partial_sort.cu"}, 1.8734),
                  "batch=2, speedup=1.87)\n"));
  auto bn = testing::loadFixture("training_batch_norm");
  ASSERT_TRUE(bn.ok()) << bn.error().message;
  auto bnForward = testing::fixtureForward(bn.value());
  ASSERT_TRUE(bnForward.ok()) << bnForward.error().message;
  Graph stats = bn.value();
  stats.independentRows = stats.tensor(stats.inputs[0])->shape[0];
  const std::string written = forwardReplacement(stats, makePlan(stats), bnForward.value(), {"k", "bn.cu"});
  EXPECT_TRUE(has(written, "route = program.route(")) << written;
  EXPECT_FALSE(has(written, "batch=")) << written;
}

TEST(PartialCandidate, SortStaysInPyTorchBetweenTwoSegments) {
  auto g = testing::loadFixture("partial_sort");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Plan plan = makePlan(g.value());
  EXPECT_FALSE(plan.wholeForward());
  auto c = testing::fixtureCandidate("partial_sort");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& py = c.value().python;
  const std::string& cu = c.value().cuda;
  EXPECT_TRUE(has(py, "STITCH_PYTORCH_OPS = {\"aten::sort\": 1}")) << py;
  EXPECT_TRUE(has(py, "torch.ops.aten.sort.default(")) << py;
  EXPECT_TRUE(has(py, "_stitch_lib.segment(0, x, ")) << py;
  EXPECT_TRUE(has(py, "_stitch_lib.segment(1, ")) << py;
  EXPECT_TRUE(has(cu, "extern \"C\" int stitch_segment("));
  EXPECT_FALSE(has(cu, "int stitch_forward("));  // two segments: no whole-forward entry point
  EXPECT_TRUE(has(cu, "kDtype1[]"));
  // Model's own construction, so the same seed draws the same weights (nothing copied).
  EXPECT_TRUE(has(py, "self.conv = nn.Conv2d(3, channels, kernel_size=3, padding=1)")) << py;
  EXPECT_FALSE(has(py, "register_parameter")) << py;
  const auto cover = planCoverage(g.value(), plan, {});
  EXPECT_EQ(cover.operators - cover.coveredOperators, 1);
  EXPECT_EQ(cover.timeBasis, "bytes");
  EXPECT_GT(cover.timeShare, 0.5);
  EXPECT_LT(cover.timeShare, 1.0);
}

// BatchNorm in training mode is generated whole: batch statistics, the normalization fused with
// what follows, and running_mean, running_var and num_batches_tracked written back into the
// module's own buffers (the slots ModelNew passes are those buffers, never copies).
TEST(TrainingBatchNorm, StatisticsAndBufferUpdatesAreGenerated) {
  auto g = testing::loadFixture("training_batch_norm");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Plan plan = makePlan(g.value());
  EXPECT_TRUE(plan.wholeForward()) << testing::leftOf(plan);
  std::set<std::string> written;
  for (const auto& k : plan.kernels)
    for (const auto& id : k.writes()) written.insert(g.value().tensor(id)->name.value_or(id));
  EXPECT_TRUE(written.count("bn.running_mean"));
  EXPECT_TRUE(written.count("bn.running_var"));
  EXPECT_TRUE(written.count("bn.num_batches_tracked"));
  auto c = testing::fixtureCandidate("training_batch_norm");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& py = c.value().python;
  const std::string& cu = c.value().cuda;
  EXPECT_TRUE(has(py, "STITCH_PYTORCH_OPS = {}")) << py;
  EXPECT_TRUE(has(py, "self.bn.num_batches_tracked, ")) << py;
  EXPECT_TRUE(has(py, "self.bn.running_mean, self.bn.running_var, ")) << py;
  EXPECT_FALSE(has(py, "torch.ops")) << py;
  EXPECT_TRUE(has(cu, "(v0 + 1LL)")) << "the counter counts in int64";
  EXPECT_TRUE(has(cu, "* (0.9f)")) << "(1 - momentum) of the running statistics";
  EXPECT_TRUE(has(cu, "/ (127.0f)")) << "the running variance is the unbiased one: n - 1 = 2·8·8 - 1";
}

// `torch.tensor(self.constant)` in a forward is a number in the generated kernel: nothing of the
// forward stays in PyTorch, and ModelNew does not make the tensor again.
TEST(ScalarConstant, IsANumberInTheKernel) {
  const Plan plan = makePlan(testing::loadFixture("scalar_constant").value());
  EXPECT_TRUE(plan.wholeForward());
  auto c = testing::fixtureCandidate("scalar_constant");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().python, "STITCH_PYTORCH_OPS = {}")) << c.value().python;
  EXPECT_FALSE(has(c.value().python, "torch.tensor(")) << c.value().python;
  EXPECT_TRUE(has(c.value().cuda, "(0.5f)")) << "the constant, as a literal";
}

// Also where the kernel that reads the constant is not the one its lift_fresh joined (the consumers
// of a GroupNorm of few rows get a kernel of their own).
TEST(ScalarConstant, IsANumberInALaterKernel) {
  const Plan plan = makePlan(testing::loadFixture("scalar_constant_later").value());
  EXPECT_TRUE(plan.wholeForward()) << testing::leftOf(plan);
  EXPECT_GE(plan.kernels.size(), 2u);
  auto c = testing::fixtureCandidate("scalar_constant_later");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(has(c.value().python, "torch.tensor(")) << c.value().python;
  EXPECT_TRUE(has(c.value().cuda, "(0.25f)")) << c.value().cuda;
}

// A channel shuffle is generated: the kernel after the transpose reads the convolution's tail
// through the transposed strides (the group dim's stride is a whole group of channels).
TEST(Layout, ChannelShuffleReadsThroughTheTransposedStrides) {
  const Plan plan = makePlan(testing::loadFixture("channel_shuffle").value());
  EXPECT_TRUE(plan.wholeForward()) << testing::leftOf(plan);
  auto c = testing::fixtureCandidate("channel_shuffle");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().python, "STITCH_PYTORCH_OPS = {}")) << c.value().python;
  // [2, 4, 3, 8, 8] iterated, [2, 3, 4, 8, 8] read: dim 2 (the group) steps over 4·8·8 elements.
  EXPECT_TRUE(has(c.value().cuda, "(rest % (int64_t)3LL) * (int64_t)256LL")) << c.value().cuda;
}

// minGPT's causal attention is generated whole: the mask is a select in the kernel that scales
// the scores (masked_fill of -inf where the causal buffer is 0), between the batched GEMMs.
TEST(Attention, TheCausalMaskIsASelectInTheGeneratedKernels) {
  auto g = testing::loadFixture("causal_attention");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Plan plan = makePlan(g.value());
  EXPECT_TRUE(plan.wholeForward()) << testing::leftOf(plan);
  auto c = testing::fixtureCandidate("causal_attention");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().python, "STITCH_PYTORCH_OPS = {}")) << c.value().python;
  EXPECT_TRUE(has(c.value().cuda, "__int_as_float(0xff800000)")) << "-inf where the mask is set";
  EXPECT_TRUE(has(c.value().cuda, "!= 0.0f ?")) << "masked_fill as a select";
}

// Without a momentum (a cumulative average over num_batches_tracked) the update stays in PyTorch,
// with the counter it reads.
TEST(TrainingBatchNorm, CumulativeAverageStaysInPyTorch) {
  auto text = std::ifstream(testing::sourceDir() / "tests/fixtures/graphs/training_batch_norm.json");
  auto j = nlohmann::json::parse(text);
  for (auto& n : j["nodes"])
    for (auto& a : n["inputs"])
      if (a.value("name", "") == "momentum") a["value"] = nullptr;
  auto g = parseNormalized(j);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Plan plan = makePlan(g.value());
  bool batchNormLeft = false;
  for (const auto& u : plan.uncovered) batchNormLeft = batchNormLeft || u.op == "aten::native_batch_norm";
  EXPECT_TRUE(batchNormLeft);
}

// An in-place operator whose old value is read again must stay in-place: it is not rewritten;
// one on an intermediate nothing else sees becomes its functional form.
TEST(PartialCandidate, InPlaceFormsBecomeFunctionalOnlyWhereNothingElseSeesTheWrite) {
  auto g = testing::loadFixture("training_batch_norm");
  ASSERT_TRUE(g.ok());
  int relu = 0, writeBacks = 0;
  for (const Node& n : g.value().nodes) {
    relu += n.op == "aten::relu" && n.kind == "compute";
    writeBacks += writeBackTarget(g.value(), n) != nullptr;  // the buffers' updates: observable
  }
  EXPECT_EQ(relu, 1);
  EXPECT_EQ(writeBacks, 3);
}

}  // namespace
}  // namespace stitch::agents::builtin
