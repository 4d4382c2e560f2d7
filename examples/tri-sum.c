/*
 * tri-sum: prefix sums over the lower triangle of an N x N int32 matrix.
 *   P[i][j] = sum_{k=0..j} A[i][k]        for 0 <= j <= i   (row prefix)
 *   rs[i]   = P[i][i]                                        (row total)
 *   cs[j]   = sum_{i=j..N-1} P[i][j]                         (column sums)
 * Both nests have triangular iteration domains (j <= i, then i >= j).
 * Sums are accumulated in int64 (the int32 inputs are widened by a cast),
 * so they cannot overflow for any int32 input.
 */
#include <stdint.h>

#ifndef N
#define N 24
#endif

void kernel_tri_sum(int32_t A[N][N], int64_t P[N][N], int64_t rs[N],
                    int64_t cs[N])
{
  int i, j;

#pragma scop
  for (i = 0; i < N; i++) {
    rs[i] = 0;
    for (j = 0; j <= i; j++) {
      rs[i] += (int64_t)A[i][j];
      P[i][j] = rs[i];
    }
  }
  for (j = 0; j < N; j++) {
    cs[j] = 0;
    for (i = j; i < N; i++)
      cs[j] += P[i][j];
  }
#pragma endscop
}
