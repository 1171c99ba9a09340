// fast_exp: the exp of the search tree's softmax weights (header-only C++17, no Python headers).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

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

// The two-lane kernel: exp(v) for v already in double lanes. The batches are short (1 to 4 pairs
// in the tree): if the compiler could see the constants it would hoist and broadcast all ~18 of
// them before every batch, which costs more than the pairs themselves.
#if defined(__SSE2__)
inline __m128d fast_exp_sse2(__m128d v) {
  using namespace fast_exp_detail;
  // Both lanes of every constant in one aligned table, read through a pointer the compiler cannot
  // see through (the empty asm), so that each constant is one memory operand of the instruction
  // that uses it instead of a load plus a broadcast.
  alignas(16) static const double kTable[18][2] = {
      {kMin, kMin}, {kInvLn2, kInvLn2}, {kShift, kShift}, {kLn2Hi, kLn2Hi}, {kLn2Lo, kLn2Lo},
      {kCoef[0], kCoef[0]}, {kCoef[1], kCoef[1]}, {kCoef[2], kCoef[2]}, {kCoef[3], kCoef[3]},
      {kCoef[4], kCoef[4]}, {kCoef[5], kCoef[5]}, {kCoef[6], kCoef[6]}, {kCoef[7], kCoef[7]},
      {kCoef[8], kCoef[8]}, {kCoef[9], kCoef[9]}, {kCoef[10], kCoef[10]}, {kCoef[11], kCoef[11]},
      {kCoef[12], kCoef[12]}};
  const double(*c)[2] = kTable;
#if defined(__GNUC__)
  __asm__("" : "+r"(c));
#endif
  const __m128d shift = _mm_load_pd(c[2]);
  v = _mm_max_pd(v, _mm_load_pd(c[0]));  // Also maps NaN to kMin, like the scalar clamp.
  const __m128d t = _mm_add_pd(_mm_mul_pd(v, _mm_load_pd(c[1])), shift);
  const __m128d kd = _mm_sub_pd(t, shift);
  const __m128d r = _mm_sub_pd(_mm_sub_pd(v, _mm_mul_pd(kd, _mm_load_pd(c[3]))), _mm_mul_pd(kd, _mm_load_pd(c[4])));
  __m128d p = _mm_load_pd(c[5]);
  for (int i = 1; i < 13; ++i) p = _mm_add_pd(_mm_mul_pd(p, r), _mm_load_pd(c[5 + i]));
  const __m128i k = _mm_sub_epi64(_mm_castpd_si128(t), _mm_set1_epi64x(kShiftBits - 1023));
  return _mm_mul_pd(_mm_castsi128_pd(_mm_slli_epi64(k, 52)), p);
}
#endif

// out[i] = fast_exp(x[i]) for i < n (out may alias x). With SSE2 an odd last element runs as a
// pair with a dummy lane 0.0, which costs less than the scalar code and gives the same value.
inline void fast_exp_batch(const double* x, double* out, int32_t n) {
  int32_t i = 0;
#if defined(__SSE2__)
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(out + i, fast_exp_sse2(_mm_loadu_pd(x + i)));
  if (i < n) _mm_store_sd(out + i, fast_exp_sse2(_mm_load_sd(x + i)));
#else
  for (; i < n; ++i) out[i] = fast_exp(x[i]);
#endif
}

// max(x[0], ..., x[n - 1]) of finite floats (-inf when n == 0), four lanes at a time with SSE2: the
// shift of a softmax. Max is exact, so the order of the comparisons cannot change the result.
inline float max_float(const float* x, int32_t n) {
  int32_t i = 0;
#if defined(__SSE2__)
  __m128 m = _mm_set1_ps(-std::numeric_limits<float>::infinity());
  for (; i + 4 <= n; i += 4) m = _mm_max_ps(m, _mm_loadu_ps(x + i));
  m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
  for (; i < n; ++i) m = _mm_max_ss(m, _mm_load_ss(x + i));
  return _mm_cvtss_f32(m);
#else
  float hi = -std::numeric_limits<float>::infinity();
  for (; i < n; ++i) hi = x[i] > hi ? x[i] : hi;
  return hi;
#endif
}

// out[i] = fast_exp(logits[i] - shift) for i < n: softmax weights straight from float32 logits.
// Returns out[0] + out[1] + ... + out[n - 1], summed in index order.
inline double fast_exp_shifted(const float* logits, double shift, double* out, int32_t n) {
  int32_t i = 0;
  double total = 0.0;
#if defined(__SSE2__)
  const __m128d s = _mm_set1_pd(shift);
  for (; i + 2 <= n; i += 2) {
    const __m128 two = _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(logits + i)));
    const __m128d e = fast_exp_sse2(_mm_sub_pd(_mm_cvtps_pd(two), s));
    _mm_storeu_pd(out + i, e);
    total += _mm_cvtsd_f64(e);
    total += _mm_cvtsd_f64(_mm_unpackhi_pd(e, e));
  }
  if (i < n) {  // The odd last logit: lane 1 is a dummy.
    const __m128d e = fast_exp_sse2(_mm_sub_sd(_mm_cvtss_sd(_mm_setzero_pd(), _mm_load_ss(logits + i)), s));
    _mm_store_sd(out + i, e);
    total += _mm_cvtsd_f64(e);
  }
#else
  for (; i < n; ++i) {
    out[i] = fast_exp(static_cast<double>(logits[i]) - shift);
    total += out[i];
  }
#endif
  return total;
}

// x[i] *= c for i < n, two lanes at a time with SSE2 (the same products as the scalar loop).
inline void scale_in_place(double* x, int32_t n, double c) {
  int32_t i = 0;
#if defined(__SSE2__)
  const __m128d k = _mm_set1_pd(c);
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(x + i, _mm_mul_pd(_mm_loadu_pd(x + i), k));
#endif
  for (; i < n; ++i) x[i] *= c;
}

}  // namespace mcts
}  // namespace lzlite
