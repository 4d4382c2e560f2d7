/*
 * band-mv: banded matrix-vector product y := A * x where only the band
 * |i - j| <= BW of A (N x N, double) is touched.  The inner loop bounds
 * are max(i - BW, 0) and min(i + BW, N - 1), written with ?: directly in
 * the for header.
 */
#ifndef N
#define N 24
#endif
#ifndef BW
#define BW 3
#endif

void kernel_band_mv(double A[N][N], double x[N], double y[N])
{
  int i, j;

#pragma scop
  for (i = 0; i < N; i++) {
    y[i] = 0.0;
    for (j = (i - BW > 0 ? i - BW : 0); j <= (i + BW < N - 1 ? i + BW : N - 1); j++)
      y[i] += A[i][j] * x[j];
  }
#pragma endscop
}
