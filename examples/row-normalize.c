/*
 * row-normalize: per-row L2 normalisation using a local scalar and a
 * local array.
 *   buf[j]   = A[i][j]^2               (local array, reused for every row)
 *   acc      = sum_j buf[j]            (local scalar declared in the nest)
 *   rnorm[i] = sqrt(acc)
 *   B[i][j]  = A[i][j] / (rnorm[i] + 1) + 0.01 * buf[j]
 * A and B are M x N (double).  buf is declared in the function body
 * just before the scop; acc is declared inside the loop nest.
 */
#include <math.h>

#ifndef M
#define M 16
#endif
#ifndef N
#define N 24
#endif

void kernel_row_normalize(double A[M][N], double B[M][N], double rnorm[M])
{
  int i, j;
  double buf[N];

#pragma scop
  for (i = 0; i < M; i++) {
    double acc = 0;
    for (j = 0; j < N; j++) {
      buf[j] = A[i][j] * A[i][j];
      acc += buf[j];
    }
    rnorm[i] = sqrt(acc);
    for (j = 0; j < N; j++)
      B[i][j] = A[i][j] / (rnorm[i] + 1.0) + 0.01 * buf[j];
  }
#pragma endscop
}
