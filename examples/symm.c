/*
 * symm: symmetric matrix multiply.
 *   C := alpha * A * B + beta * C
 * A is M x M symmetric; only its lower triangle (k <= i) is read.
 * B and C are M x N (double).  A local scalar carries the dot product
 * of row i of the strictly-lower part of A with column j of B.
 */
#ifndef M
#define M 16
#endif
#ifndef N
#define N 18
#endif

void kernel_symm(double alpha, double beta, double C[M][N], double A[M][M],
                 double B[M][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      double acc = 0.0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        acc += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * acc;
    }
#pragma endscop
}
