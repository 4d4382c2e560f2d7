/* In-place 2-D Gauss-Seidel smoothing on integers: every point reads updated and old neighbours. */
#ifndef T
#define T 3
#endif
#ifndef N
#define N 12
#endif

void kernel_seidel_int(int A[N][N])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < T; t++)
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        A[i][j] = (A[i - 1][j] + A[i][j - 1] + 4 * A[i][j] + A[i][j + 1] + A[i + 1][j]) / 8;
#pragma endscop
}
