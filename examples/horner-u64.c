/*
 * horner-u64: evaluation of a degree D-1 polynomial with coefficients
 * c[0..D-1] at N points by Horner's rule, k running down (k--).
 *   p[i] = sum_k c[k] * (x[i] + G)^k   modulo 2^64  (uint64_t wrap-around;
 *          G = 0x9E3779B97F4A7C15ULL makes every product wrap)
 *   m[i] = sum_k c[k] * x[i]^k modulo 1000003  (long long, %= after every
 *          step so nothing overflows: x, c < 2^31)
 *   fold[i] = hi32(p) ^ lo32(p) + 0x10UL * i   (unsigned long long, shifts)
 */
#include <stdint.h>

#ifndef N
#define N 32
#endif
#ifndef D
#define D 8
#endif

void kernel_horner_u64(uint64_t c[D], uint64_t x[N], uint64_t p[N],
                       long long m[N], unsigned long long fold[N])
{
  int i, k;

#pragma scop
  for (i = 0; i < N; i++) {
    p[i] = c[D - 1];
    m[i] = (long long)c[D - 1] % 1000003LL;
    for (k = D - 2; k >= 0; k--) {
      p[i] *= x[i] + 0x9E3779B97F4A7C15ULL;
      p[i] += c[k];
      m[i] = m[i] * (long long)x[i] + (long long)c[k];
      m[i] %= 1000003LL;
    }
    fold[i] = (p[i] >> 32) ^ (p[i] & 0xFFFFFFFFULL);
    fold[i] += 0x10UL * (unsigned long long)i;
  }
#pragma endscop
}
