/*
 * tiled-transpose: out-of-place transpose B := A^T of an N x N matrix
 * (double), tiled by TS x TS.  Tile loops have constant step TS and the
 * point loops have min() upper bounds written with ?:, so partial edge
 * tiles (N not a multiple of TS) are handled.
 */
#ifndef N
#define N 20
#endif
#ifndef TS
#define TS 6
#endif

void kernel_tiled_transpose(double A[N][N], double B[N][N])
{
  int ii, jj, i, j;

#pragma scop
  for (ii = 0; ii < N; ii += TS)
    for (jj = 0; jj < N; jj += TS)
      for (i = ii; i < (ii + TS < N ? ii + TS : N); i++)
        for (j = jj; j < (jj + TS < N ? jj + TS : N); j++)
          B[j][i] = A[i][j];
#pragma endscop
}
