/* 3mm: G = (A B)(C D). */
#ifndef NI
#define NI 16
#endif
#ifndef NJ
#define NJ 18
#endif
#ifndef NK
#define NK 20
#endif
#ifndef NL
#define NL 22
#endif
#ifndef NM
#define NM 24
#endif
void kernel_3mm(double E[NI][NJ], double A[NI][NK], double B[NK][NJ], double F[NJ][NL], double C[NJ][NM],
                double D[NM][NL], double G[NI][NL])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++) {
      E[i][j] = 0.0;
      for (k = 0; k < NK; ++k)
        E[i][j] += A[i][k] * B[k][j];
    }
  for (i = 0; i < NJ; i++)
    for (j = 0; j < NL; j++) {
      F[i][j] = 0.0;
      for (k = 0; k < NM; ++k)
        F[i][j] += C[i][k] * D[k][j];
    }
  for (i = 0; i < NI; i++)
    for (j = 0; j < NL; j++) {
      G[i][j] = 0.0;
      for (k = 0; k < NJ; ++k)
        G[i][j] += E[i][k] * F[k][j];
    }
#pragma endscop
}
