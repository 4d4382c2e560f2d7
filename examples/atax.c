// dpn-synth-args: --param m=12 --param n=16
/*
 * atax: y := A^T * (A * x)
 * A is m x n; tmp holds the intermediate A * x (length m).
 * Sizes are run-time parameters (C99 VLA parameters).
 */

void kernel_atax(int m, int n, double A[m][n], double x[n], double y[n],
                 double tmp[m])
{
  int i, j;

#pragma scop
  for (j = 0; j < n; j++)
    y[j] = 0.0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < n; j++)
      tmp[i] += A[i][j] * x[j];
    for (j = 0; j < n; j++)
      y[j] += A[i][j] * tmp[i];
  }
#pragma endscop
}
