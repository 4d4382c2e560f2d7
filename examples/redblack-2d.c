/*
 * redblack-2d: red-black Gauss-Seidel relaxation on an N x N grid
 * (double), T sweeps, in place.  Each colour is covered by two loop
 * nests whose loops all have step 2 (i += 2, j += 2) with odd or even
 * start values; red points have i + j even, black points i + j odd.
 */
#ifndef T
#define T 6
#endif
#ifndef N
#define N 20
#endif

void kernel_redblack_2d(double A[N][N], double F[N][N])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < T; t++) {
    /* red: (odd, odd) and (even, even) interior points */
    for (i = 1; i < N - 1; i += 2)
      for (j = 1; j < N - 1; j += 2)
        A[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1]
                          + A[i][j + 1] - F[i][j]);
    for (i = 2; i < N - 1; i += 2)
      for (j = 2; j < N - 1; j += 2)
        A[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1]
                          + A[i][j + 1] - F[i][j]);
    /* black: (odd, even) and (even, odd) interior points */
    for (i = 1; i < N - 1; i += 2)
      for (j = 2; j < N - 1; j += 2)
        A[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1]
                          + A[i][j + 1] - F[i][j]);
    for (i = 2; i < N - 1; i += 2)
      for (j = 1; j < N - 1; j += 2)
        A[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1]
                          + A[i][j + 1] - F[i][j]);
  }
#pragma endscop
}
