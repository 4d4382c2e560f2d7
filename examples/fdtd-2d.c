/*
 * fdtd-2d: 2-D finite-difference time-domain (Yee) update.
 * Fields ex, ey, hz are NX x NY (double); fict holds the source value
 * injected into row 0 of ey at each of the TMAX time steps.
 */
#ifndef TMAX
#define TMAX 6
#endif
#ifndef NX
#define NX 16
#endif
#ifndef NY
#define NY 18
#endif

void kernel_fdtd_2d(double ex[NX][NY], double ey[NX][NY], double hz[NX][NY],
                    double fict[TMAX])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < TMAX; t++) {
    for (j = 0; j < NY; j++)
      ey[0][j] = fict[t];
    for (i = 1; i < NX; i++)
      for (j = 0; j < NY; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (i = 0; i < NX; i++)
      for (j = 1; j < NY; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (i = 0; i < NX - 1; i++)
      for (j = 0; j < NY - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j]
                                     + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}
