/*
 * trmm: triangular matrix multiply.
 *   B := alpha * A^T * B
 * A is M x M unit lower triangular (only the strictly-lower part, k > i,
 * is read; the unit diagonal is implicit).  B is M x N (double).
 */
#ifndef M
#define M 16
#endif
#ifndef N
#define N 20
#endif

void kernel_trmm(double alpha, double A[M][M], double B[M][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      for (k = i + 1; k < M; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
#pragma endscop
}
