/* 1-D Jacobi on 16-bit integers with two buffers; `/ 3` truncates toward zero as in C. */
#include <stdint.h>

#ifndef T
#define T 6
#endif
#ifndef N
#define N 30
#endif

void kernel_jacobi_1d_int(int16_t A[N], int16_t B[N])
{
  int t, i;
#pragma scop
  for (t = 0; t < T; t++) {
    for (i = 1; i < N - 1; i++)
      B[i] = (int16_t)((A[i - 1] + A[i] + A[i + 1]) / 3);
    for (i = 1; i < N - 1; i++)
      A[i] = (int16_t)((B[i - 1] + B[i] + B[i + 1]) / 3);
  }
#pragma endscop
}
