void war(double A[16], double B[16], double C[16]) {
#pragma scop
  for (int i = 0; i < 16; i++)
    C[i] = A[i] * 2.0;
  for (int i = 0; i < 16; i++)
    A[i] = B[i] + 1.0;
#pragma endscop
}
