/*
 * seidel-2d: 9-point Gauss-Seidel stencil, in place on A (N x N, double),
 * T sweeps.  Each update reads already-updated neighbours (i-1, j-1),
 * so the nest carries dependences in all three loops.
 */
#ifndef T
#define T 6
#endif
#ifndef N
#define N 20
#endif

void kernel_seidel_2d(double A[N][N])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < T; t++)
    for (i = 1; i <= N - 2; i++)
      for (j = 1; j <= N - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
#pragma endscop
}
