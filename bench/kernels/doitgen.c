/* doitgen: multiresolution kernel, A[r][q][:] = A[r][q][:] x C4, through a temporary row. */
#ifndef NR
#define NR 10
#endif
#ifndef NQ
#define NQ 8
#endif
#ifndef NP
#define NP 12
#endif
void kernel_doitgen(double A[NR][NQ][NP], double C4[NP][NP], double sum[NP])
{
  int r, q, p, s;
#pragma scop
  for (r = 0; r < NR; r++)
    for (q = 0; q < NQ; q++) {
      for (p = 0; p < NP; p++) {
        sum[p] = 0.0;
        for (s = 0; s < NP; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < NP; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}
