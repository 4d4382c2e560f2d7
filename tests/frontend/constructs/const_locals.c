/* `const` locals with constant initializers, before and inside the scop: named constants, usable in
   loop bounds, subscripts and array sizes as numbers. */
void const_locals(double A[12], double B[12], int C[12])
{
  const int K = 3;
  const double alpha = 1.5;
  int i, j;
#pragma scop
  const int L = 2 * K + 1;
  double tmp[L];
  for (i = K; i < 12; i++) {
    const float half = 0.5f;
    B[i] = alpha * A[i - K] + half * A[i];
    C[i] = C[i] * L + K;
  }
  for (j = 0; j < L; j++)
    tmp[j] = A[j] / alpha;
  for (i = 0; i < K; i++)
    for (j = 0; j < L; j++)
      B[i] += tmp[L - 1 - j];
#pragma endscop
}
