// The generated direct transposed-convolution kernel, run on the CPU: each block's steps
// (sc_deconv_block_of, sc_deconv_weight, sc_deconv_output) thread by thread over the launcher's
// grid, against a scatter-form transposed convolution in double. Strides, windows and padding
// where a phase gets fewer taps or none, output padding, groups, channel counts that leave a
// partial tile, and 1-D. The output starts as NaN, so an output the grid misses fails too.
// Built by deconv_on_cpu.py with CANDIDATE naming a generated candidate that holds the kernel.
#include CANDIDATE

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

struct Case {
  int n, cin, cout, groups, h, w, kh, kw, sy, sx, py, px, opy, opx;
};

int outSize(int in, int k, int s, int p, int op) { return (in - 1) * s - 2 * p + k + op; }

// out[n, g*cout+co, iy*sy - py + ky, ix*sx - px + kx] += x[n, g*cin+ci, iy, ix] * w[g*cin+ci, co, ky, kx]
std::vector<double> scatter(const Case& c, const std::vector<float>& x, const std::vector<float>& w, int oh, int ow) {
  const int cin = c.cin / c.groups, cout = c.cout / c.groups;
  std::vector<double> y(static_cast<size_t>(c.n) * c.cout * oh * ow, 0.0);
  for (int n = 0; n < c.n; ++n)
    for (int g = 0; g < c.groups; ++g)
      for (int ci = 0; ci < cin; ++ci)
        for (int iy = 0; iy < c.h; ++iy)
          for (int ix = 0; ix < c.w; ++ix) {
            const double v = x[((static_cast<size_t>(n) * c.cin + g * cin + ci) * c.h + iy) * c.w + ix];
            for (int co = 0; co < cout; ++co)
              for (int ky = 0; ky < c.kh; ++ky)
                for (int kx = 0; kx < c.kw; ++kx) {
                  const int oy = iy * c.sy - c.py + ky, ox = ix * c.sx - c.px + kx;
                  if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                  const double wt = w[((static_cast<size_t>(g * cin + ci) * cout + co) * c.kh + ky) * c.kw + kx];
                  y[((static_cast<size_t>(n) * c.cout + g * cout + co) * oh + oy) * ow + ox] += v * wt;
                }
          }
  return y;
}

template <int COT, int KH, int KW, int SY, int SX>
bool check(const Case& c, unsigned seed) {
  if (c.kh != KH || c.kw != KW || c.sy != SY || c.sx != SX) {
    std::printf("case does not match the kernel's constants\n");
    return false;
  }
  const int oh = outSize(c.h, c.kh, c.sy, c.py, c.opy), ow = outSize(c.w, c.kw, c.sx, c.px, c.opx);
  sc_conv_shape s{};
  s.nd = 4;
  const int in[4] = {c.n, c.cin, c.h, c.w}, wt[4] = {c.cin, c.cout / c.groups, c.kh, c.kw}, out[4] = {c.n, c.cout, oh, ow};
  for (int i = 0; i < 4; ++i) s.in[i] = in[i], s.w[i] = wt[i], s.out[i] = out[i];
  s.pad[0] = c.py, s.pad[1] = c.px, s.stride[0] = c.sy, s.stride[1] = c.sx, s.dilation[0] = s.dilation[1] = 1;
  s.groups = c.groups, s.transposed = 1, s.split = 1;

  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(c.n) * c.cin * c.h * c.w), w(static_cast<size_t>(c.cin) * wt[1] * c.kh * c.kw);
  for (float& v : x) v = normal(rng);
  for (float& v : w) v = normal(rng);
  std::vector<float> y(static_cast<size_t>(c.n) * c.cout * oh * ow, NAN);

  // The launcher's grid and shared memory, block by block.
  const dim3 grid = sc_deconv_grid<COT, SY, SX>(s);
  const int staged = sc_deconv_staged<COT, KH, KW, SY, SX>(s);
  std::vector<float4> smem((staged + 3) / 4);
  float* ws = reinterpret_cast<float*>(smem.data());
  for (int bx = 0; bx < static_cast<int>(grid.x); ++bx)
    for (int by = 0; by < static_cast<int>(grid.y); ++by) {
      const sc_deconv_block b = sc_deconv_block_of<COT, KH, KW, SY, SX>(bx, by, s);
      for (int i = 0; i < staged; ++i) ws[i] = sc_deconv_weight<COT, KH, KW, SY, SX>(w.data(), b, s, i);
      for (int t = 0; t < 128; ++t) sc_deconv_output<COT, KH, KW, SY, SX>(x.data(), ws, y.data(), b, s, t);
    }

  const std::vector<double> ref = scatter(c, x, w, oh, ow);
  double worst = 0.0;
  size_t unwritten = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) ++unwritten;
    else worst = std::fmax(worst, std::fabs(y[i] - ref[i]) / (1.0 + std::fabs(ref[i])));
  }
  const bool ok = unwritten == 0 && worst < 1e-5;
  std::printf("%s k%dx%d s%dx%d pad %dx%d outpad %dx%d groups %d %d->%d, %dx%d -> %dx%d: %zu unwritten, max error %.2e\n",
              ok ? "ok  " : "FAIL", KH, KW, SY, SX, c.py, c.px, c.opy, c.opx, c.groups, c.cin, c.cout, c.h, c.w, oh, ow,
              unwritten, worst);
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  // 4x4 stride-2 upsampling (83, 70): padding 0-2, output padding, a partial channel tile.
  for (int p = 0; p <= 2; ++p) ok &= check<16, 4, 4, 2, 2>({2, 8, 20, 1, 5, 7, 4, 4, 2, 2, p, p, 0, 0}, 1 + p);
  ok &= check<16, 4, 4, 2, 2>({1, 4, 16, 1, 6, 3, 4, 4, 2, 2, 1, 2, 1, 1}, 7);
  // Groups with a 3x3 window over stride 2 (a phase gets 2 taps, the other 1).
  ok &= check<8, 3, 3, 2, 2>({2, 6, 10, 2, 4, 5, 3, 3, 2, 2, 1, 1, 1, 0}, 11);
  // Unequal strides; a window narrower than the stride, so some phases get no tap at all.
  ok &= check<16, 3, 3, 3, 2>({1, 5, 17, 1, 4, 6, 3, 3, 3, 2, 2, 0, 2, 1}, 13);
  ok &= check<4, 2, 2, 3, 3>({2, 3, 4, 1, 5, 4, 2, 2, 3, 3, 0, 1, 0, 2}, 17);
  // 1-D as the emitter passes it (69): a unit height, the window and stride along the width.
  ok &= check<16, 1, 4, 1, 2>({2, 6, 24, 1, 1, 33, 1, 4, 1, 2, 0, 1, 0, 0}, 19);
  // Stride 1: every phase is the whole output.
  ok &= check<8, 3, 3, 1, 1>({1, 4, 6, 2, 5, 5, 3, 3, 1, 1, 1, 0, 0, 0}, 23);
  std::printf(ok ? "all cases match\n" : "some cases failed\n");
  return ok ? 0 : 1;
}
