/*
 * back-subst: backward substitution, solves U * x = b.
 * U is N x N upper triangular (only j >= i is read), double.
 * The outer loop runs downwards: for (i = N - 1; i >= 0; i--).
 */
#ifndef N
#define N 24
#endif

void kernel_back_subst(double U[N][N], double x[N], double b[N])
{
  int i, j;

#pragma scop
  for (i = N - 1; i >= 0; i--) {
    x[i] = b[i];
    for (j = i + 1; j < N; j++)
      x[i] -= U[i][j] * x[j];
    x[i] = x[i] / U[i][i];
  }
#pragma endscop
}
