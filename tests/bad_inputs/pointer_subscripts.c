/* Two subscripts on a pointer to scalars. */
void kernel(double *A, double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = A[i][1];
#pragma endscop
}
