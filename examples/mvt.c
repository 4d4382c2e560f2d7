/*
 * mvt: two matrix-vector products, one with the transpose.
 *   x1 := x1 + A * y1
 *   x2 := x2 + A^T * y2
 * A is N x N (double).
 */
#ifndef N
#define N 24
#endif

void kernel_mvt(double x1[N], double x2[N], double y1[N], double y2[N],
                double A[N][N])
{
  int i, j;

#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      x1[i] += A[i][j] * y1[j];
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      x2[i] += A[j][i] * y2[j];
#pragma endscop
}
