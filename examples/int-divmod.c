/*
 * int-divmod: integer division and remainder by run-time divisors (C99: quotients truncate
 * toward zero, remainders take the sign of the dividend).
 *   q[i][j], r[i][j]: int32 (a[i][j] * 1000 + j) / and % (d[j] | 1)   (mixed signs)
 *   acc[i] = sum_j q[i][j] % (h[i] | 1) + r[i][j] / ((i - j) | 1)     (reduction through the divider)
 *   uq[i], ur[i]: uint32 / and % (a negative int16 divisor converts to a huge unsigned one)
 *   wq[i], wr[i]: int64 / and %
 *   c[i][*]: constant divisors (power of two, 10, -16, unsigned power of two)
 * Every run-time divisor is odd (x | 1) or at least 1, so no input divides by zero, and no
 * dividend can be INT_MIN: gcc never traps, whatever the inputs.
 */
#include <stdint.h>

#ifndef N
#define N 16
#endif
#ifndef M
#define M 12
#endif

void kernel_int_divmod(int32_t a[N][M], int32_t d[M], int16_t h[N], uint8_t b[N], uint32_t u[N],
                       int64_t x[N], int32_t q[N][M], int32_t r[N][M], int32_t acc[N],
                       uint32_t uq[N], uint32_t ur[N], int64_t wq[N], int64_t wr[N], int32_t c[N][4])
{
  int i, j;

#pragma scop
  for (i = 0; i < N; i++) {
    acc[i] = 0;
    for (j = 0; j < M; j++) {
      q[i][j] = (a[i][j] * 1000 + j) / (d[j] | 1);
      r[i][j] = (a[i][j] * 1000 + j) % (d[j] | 1);
      acc[i] += q[i][j] % (h[i] | 1) + r[i][j] / ((i - j) | 1);
    }
    uq[i] = (u[i] * 2654435761u) / ((uint32_t)h[i] | 1u);
    ur[i] = (u[i] * 2654435761u) % ((uint32_t)b[i] + 1u);
    wq[i] = (x[i] * 1234567890123LL + h[i]) / (((int64_t)h[i] * 7919) | 1);
    wr[i] = (x[i] * 1234567890123LL + h[i]) % (((int64_t)h[i] * 7919) | 1);
    c[i][0] = (acc[i] - h[i]) / 8;
    c[i][1] = (acc[i] - h[i]) % 8;
    c[i][2] = (acc[i] - h[i]) / 10 + (acc[i] - h[i]) % -16;
    c[i][3] = (int32_t)(u[i] / 4u + u[i] % 4u);
  }
#pragma endscop
}
