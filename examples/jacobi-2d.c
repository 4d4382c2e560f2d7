/*
 * jacobi-2d: 5-point Jacobi stencil, T time steps, ping-pong between
 * A and B (both N x N, double).  Boundary cells are not updated.
 */
#ifndef T
#define T 6
#endif
#ifndef N
#define N 20
#endif

void kernel_jacobi_2d(double A[N][N], double B[N][N])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < T; t++) {
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1]
                         + A[i + 1][j] + A[i - 1][j]);
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1]
                         + B[i + 1][j] + B[i - 1][j]);
  }
#pragma endscop
}
