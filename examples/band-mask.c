/*
 * band-mask: affine if conditions using &&, || and !.
 *   B[i][j] = A[i][j] inside the band |i - j| <= BW, on row 0 and on the
 *             last column; 0 elsewhere (if / else).
 *   d[i]    = sum of the off-diagonal band entries of row i.
 * A and B are N x N (double).
 */
#ifndef N
#define N 20
#endif
#ifndef BW
#define BW 2
#endif

void kernel_band_mask(double A[N][N], double B[N][N], double d[N])
{
  int i, j;

#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      if ((i - j <= BW && j - i <= BW) || i == 0 || j == N - 1)
        B[i][j] = A[i][j];
      else
        B[i][j] = 0.0;
    }
  for (i = 0; i < N; i++) {
    d[i] = 0.0;
    for (j = 0; j < N; j++)
      if (!(j == i) && j >= i - BW && j <= i + BW)
        d[i] += A[i][j];
  }
#pragma endscop
}
