/*
 * fir-int: fixed-point FIR filter.
 *   acc[i] = sum_k x[i+k] * h[k]           (int16 samples, int8 taps,
 *                                           products widened to int32)
 *   acc[i] = (acc[i] + 2^(SHIFT-1)) >> SHIFT  (round, arithmetic shift)
 *   y[i]   = saturate_int16(acc[i])        (clamp with ?:, cast to int16)
 *   e[i]   = (int8_t)(y[i] >> 8)           (high byte, cast to int8)
 * With TAPS <= 8 the int32 accumulator cannot overflow for any input.
 * Note: >> on a negative signed value is implementation-defined in C;
 * it is an arithmetic shift on every mainstream compiler (and here).
 */
#include <stdint.h>

#ifndef N
#define N 64
#endif
#ifndef TAPS
#define TAPS 8
#endif
#ifndef SHIFT
#define SHIFT 7
#endif

void kernel_fir_int(int16_t x[N + TAPS - 1], int8_t h[TAPS], int32_t acc[N],
                    int16_t y[N], int8_t e[N])
{
  int i, k;

#pragma scop
  for (i = 0; i < N; i++) {
    acc[i] = 0;
    for (k = 0; k < TAPS; k++)
      acc[i] += (int32_t)x[i + k] * (int32_t)h[k];
    acc[i] = (acc[i] + (1 << (SHIFT - 1))) >> SHIFT;
    y[i] = (int16_t)(acc[i] > 32767 ? 32767
                     : (acc[i] < -32768 ? -32768 : acc[i]));
    e[i] = (int8_t)(y[i] >> 8);
  }
#pragma endscop
}
