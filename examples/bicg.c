// dpn-synth-args: --param m=14 --param n=18
/*
 * bicg: the two matrix-vector products of a BiCG iteration.
 *   s := A^T * r   (length m)
 *   q := A * p     (length n)
 * A is n x m.  Sizes are run-time parameters (C99 VLA parameters).
 */

void kernel_bicg(int m, int n, double A[n][m], double s[m], double q[n],
                 double p[m], double r[n])
{
  int i, j;

#pragma scop
  for (j = 0; j < m; j++)
    s[j] = 0.0;
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) {
      s[j] += r[i] * A[i][j];
      q[i] += A[i][j] * p[j];
    }
  }
#pragma endscop
}
