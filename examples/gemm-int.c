/* Integer matrix multiply with 32-bit wraparound: C = alpha*A*B + beta*C. */
#include <stdint.h>

#ifndef NI
#define NI 10
#endif
#ifndef NJ
#define NJ 12
#endif
#ifndef NK
#define NK 8
#endif

void kernel_gemm_int(int32_t alpha, int32_t beta, int32_t C[NI][NJ], int32_t A[NI][NK], int32_t B[NK][NJ])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < NI; i++) {
    for (j = 0; j < NJ; j++)
      C[i][j] = C[i][j] * beta;
    for (k = 0; k < NK; k++)
      for (j = 0; j < NJ; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}
