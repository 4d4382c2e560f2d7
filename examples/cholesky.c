/*
 * cholesky: in-place Cholesky factorisation A = L * L^T.
 * Only the lower triangle of A (j <= i) is read and overwritten with L.
 * A is N x N (double) and should be symmetric positive definite.
 */
#include <math.h>

#ifndef N
#define N 20
#endif

void kernel_cholesky(double A[N][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < N; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    for (k = 0; k < i; k++)
      A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = sqrt(A[i][i]);
  }
#pragma endscop
}
