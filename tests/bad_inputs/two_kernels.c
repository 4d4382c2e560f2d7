/* Two functions with #pragma scop: which one is the kernel? */
void scale(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] * 2.0;
#pragma endscop
}

void shift(double A[10], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = A[i] + 1.0;
#pragma endscop
}
