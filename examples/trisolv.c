// dpn-synth-args: --param n=24
/*
 * trisolv: forward substitution, solves L * x = b.
 * L is n x n lower triangular (only j <= i is read).
 * The size is a run-time parameter (C99 VLA parameters).
 */

void kernel_trisolv(int n, double L[n][n], double x[n], double b[n])
{
  int i, j;

#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}
