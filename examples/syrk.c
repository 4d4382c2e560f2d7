/*
 * syrk: symmetric rank-k update, lower triangle only.
 *   C := alpha * A * A^T + beta * C   (for j <= i)
 * C is N x N, A is N x M (double).
 */
#ifndef N
#define N 16
#endif
#ifndef M
#define M 20
#endif

void kernel_syrk(double alpha, double beta, double C[N][N], double A[N][M])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < N; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < M; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}
