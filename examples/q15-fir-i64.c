/*
 * q15-fir-i64: Q15 fixed-point FIR with 64-bit accumulation.
 *   acc[i] = 0x4000LL + sum_k (long long)x[i+k] * h[k]   (Q30, rounding)
 *   acc[i] >>= 15                                         (back to Q15)
 *   y[i]   = saturate_int16(acc[i])
 *   en[0]  = sum_i (uint64_t)(y[i] * y[i]), then <<= 1 (Q31 energy)
 * x and h are int16 Q15 values over their whole range: one product
 * needs 31 bits, the sum of TAPS of them more than 32, hence long long.
 * >>= on a negative value is an arithmetic shift (as on every
 * mainstream compiler); the left shift is on an unsigned value.
 */
#include <stdint.h>

#ifndef N
#define N 48
#endif
#ifndef TAPS
#define TAPS 16
#endif

void kernel_q15_fir_i64(int16_t x[N + TAPS - 1], int16_t h[TAPS],
                        long long acc[N], int16_t y[N], uint64_t en[1])
{
  int i, k;

#pragma scop
  en[0] = 0;
  for (i = 0; i < N; i++) {
    acc[i] = 0x4000LL;
    for (k = 0; k < TAPS; k++)
      acc[i] += (long long)x[i + k] * h[k];
    acc[i] >>= 15;
    y[i] = (int16_t)(acc[i] > 32767LL ? 32767
                     : (acc[i] < -32768LL ? -32768 : acc[i]));
    en[0] += (uint64_t)((int32_t)y[i] * y[i]);
  }
  en[0] <<= 1;
#pragma endscop
}
