/*
 * lu: in-place LU decomposition without pivoting (Doolittle).
 * On exit the strictly-lower part of A holds L (unit diagonal implicit)
 * and the upper part holds U.  A is N x N (double).  Inputs should be
 * diagonally dominant for a numerically meaningful result.
 */
#ifndef N
#define N 20
#endif

void kernel_lu(double A[N][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < N; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    for (j = i; j < N; j++)
      for (k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
  }
#pragma endscop
}
