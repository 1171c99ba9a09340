// fast_exp: the exp of the search tree's softmax weights (header-only C++17, no Python headers).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lzlite {
namespace mcts {

// exp(x) for the softmax weights of the tree (x <= 0 after subtracting a max), within ~2 ulp of
// std::exp for x >= -700; below, it returns exp(-700) ~ 1e-304 instead of a subnormal or 0, which
// is harmless in a sum of weights that contains 1. x = k ln2 + r with |r| <= ln2 / 2 and
// exp(x) = 2^k * p(r), p the degree-12 Taylor polynomial (truncation error < 2e-16). No table and
// no branch, so fast_exp_batch runs it on two lanes with SSE2; the scalar and SSE2 versions
// perform the same operations in the same order and agree bit for bit.
namespace fast_exp_detail {
constexpr double kShift = 6755399441055744.0;          // 1.5 * 2^52: adding it rounds to an integer.
constexpr double kInvLn2 = 1.4426950408889634074;
constexpr double kLn2Hi = 0.693147180369123816490;     // ln 2 split in two so that k * kLn2Hi
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // is exact for |k| < 2^11.
constexpr double kMin = -700.0;
constexpr int64_t kShiftBits = 0x4338000000000000LL;    // The bits of kShift.
constexpr double kCoef[13] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                              1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
                              1.0 / 6.0, 0.5, 1.0, 1.0};  // 1/12!, ..., 1/1!, 1/0! (Horner order).
}  // namespace fast_exp_detail

inline double fast_exp(double x) {
  using namespace fast_exp_detail;
  x = x > kMin ? x : kMin;
  const double t = x * kInvLn2 + kShift;
  const double kd = t - kShift;
  const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  double p = kCoef[0];
  for (int i = 1; i < 13; ++i) p = p * r + kCoef[i];
  int64_t k;
  std::memcpy(&k, &t, sizeof(k));
  const uint64_t scale_bits = static_cast<uint64_t>(k - kShiftBits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof(scale));
  return scale * p;
}

// The two-lane kernel: exp(v) for v already in double lanes.
#if defined(__SSE2__)
inline __m128d fast_exp_sse2(__m128d v) {
  using namespace fast_exp_detail;
  const __m128d shift = _mm_set1_pd(kShift);
  v = _mm_max_pd(v, _mm_set1_pd(kMin));  // Also maps NaN to kMin, like the scalar clamp.
  const __m128d t = _mm_add_pd(_mm_mul_pd(v, _mm_set1_pd(kInvLn2)), shift);
  const __m128d kd = _mm_sub_pd(t, shift);
  const __m128d r = _mm_sub_pd(_mm_sub_pd(v, _mm_mul_pd(kd, _mm_set1_pd(kLn2Hi))), _mm_mul_pd(kd, _mm_set1_pd(kLn2Lo)));
  __m128d p = _mm_set1_pd(kCoef[0]);
  for (int c = 1; c < 13; ++c) p = _mm_add_pd(_mm_mul_pd(p, r), _mm_set1_pd(kCoef[c]));
  const __m128i k = _mm_sub_epi64(_mm_castpd_si128(t), _mm_set1_epi64x(kShiftBits - 1023));
  return _mm_mul_pd(_mm_castsi128_pd(_mm_slli_epi64(k, 52)), p);
}
#endif

// out[i] = fast_exp(x[i]) for i < n (out may alias x).
inline void fast_exp_batch(const double* x, double* out, int32_t n) {
  int32_t i = 0;
#if defined(__SSE2__)
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(out + i, fast_exp_sse2(_mm_loadu_pd(x + i)));
#endif
  for (; i < n; ++i) out[i] = fast_exp(x[i]);
}

// out[i] = fast_exp(logits[i] - shift) for i < n: softmax weights straight from float32 logits.
inline void fast_exp_shifted(const float* logits, double shift, double* out, int32_t n) {
  int32_t i = 0;
#if defined(__SSE2__)
  const __m128d s = _mm_set1_pd(shift);
  for (; i + 2 <= n; i += 2) {
    const __m128 two = _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(logits + i)));
    _mm_storeu_pd(out + i, fast_exp_sse2(_mm_sub_pd(_mm_cvtps_pd(two), s)));
  }
#endif
  for (; i < n; ++i) out[i] = fast_exp(static_cast<double>(logits[i]) - shift);
}

}  // namespace mcts
}  // namespace lzlite
