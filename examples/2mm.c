/*
 * 2mm: two chained matrix multiplies.
 *   tmp := alpha * A * B
 *   D   := beta * D + tmp * C
 * A is NI x NK, B is NK x NJ, C is NJ x NL, D is NI x NL, tmp is NI x NJ.
 */
#ifndef NI
#define NI 12
#endif
#ifndef NJ
#define NJ 14
#endif
#ifndef NK
#define NK 16
#endif
#ifndef NL
#define NL 18
#endif

void kernel_2mm(double alpha, double beta,
                double tmp[NI][NJ], double A[NI][NK], double B[NK][NJ],
                double C[NJ][NL], double D[NI][NL])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++) {
      tmp[i][j] = 0.0;
      for (k = 0; k < NK; k++)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  for (i = 0; i < NI; i++)
    for (j = 0; j < NL; j++) {
      D[i][j] *= beta;
      for (k = 0; k < NJ; k++)
        D[i][j] += tmp[i][k] * C[k][j];
    }
#pragma endscop
}
