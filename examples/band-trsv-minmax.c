/*
 * band-trsv-minmax: banded triangular solves, L * x = b then U * z = x,
 * with bandwidth BW (double, N x N storage, only the band is read).
 * The band limits are written with MIN/MAX macros in the loop bounds;
 * the backward solve runs with a decrementing loop.
 *   x[i] = (b[i] - sum_{max(0,i-BW) <= j < i} L[i][j] * x[j]) / L[i][i]
 *   z[i] = (x[i] - sum_{i < j <= min(N-1,i+BW)} U[i][j] * z[j]) / U[i][i]
 */
#ifndef N
#define N 24
#endif
#ifndef BW
#define BW 3
#endif

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void kernel_band_trsv_minmax(double L[N][N], double U[N][N], double b[N],
                             double x[N], double z[N])
{
  int i, j;

#pragma scop
  for (i = 0; i < N; i++) {
    x[i] = b[i];
    for (j = MAX(0, i - BW); j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] /= L[i][i];
  }
  for (i = N - 1; i >= 0; i--) {
    z[i] = x[i];
    for (j = i + 1; j <= MIN(N - 1, i + BW); j++)
      z[i] -= U[i][j] * z[j];
    z[i] /= U[i][i];
  }
#pragma endscop
}
