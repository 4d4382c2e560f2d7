/* syr2k: C = alpha (A B^T + B A^T) + beta C on the lower triangle. */
#ifndef N
#define N 20
#endif
#ifndef M
#define M 24
#endif
void kernel_syr2k(double alpha, double beta, double C[N][N], double A[N][M], double B[N][M])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < N; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < M; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
#pragma endscop
}
