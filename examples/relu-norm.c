/*
 * relu-norm: bias + clipped ReLU (ReLU6) followed by L1 row normalisation.
 *   B[i][j]  = fmin(fmax(A[i][j] + bias[j], 0), 6)
 *   nrm[i]   = sum_j fabs(A[i][j])            (L1 norm of the raw row)
 *   C[i][j]  = B[i][j] / (nrm[i] + 1)
 * A, B, C are M x N (double).  Uses fmax, fmin and fabs from <math.h>.
 */
#include <math.h>

#ifndef M
#define M 16
#endif
#ifndef N
#define N 24
#endif

void kernel_relu_norm(double A[M][N], double bias[N], double B[M][N],
                      double C[M][N], double nrm[M])
{
  int i, j;

#pragma scop
  for (i = 0; i < M; i++) {
    nrm[i] = 0.0;
    for (j = 0; j < N; j++) {
      B[i][j] = fmin(fmax(A[i][j] + bias[j], 0.0), 6.0);
      nrm[i] += fabs(A[i][j]);
    }
    for (j = 0; j < N; j++)
      C[i][j] = B[i][j] / (nrm[i] + 1.0);
  }
#pragma endscop
}
