/* A pointer parameter: its extent is the largest index the kernel reads (`pointers`). */
void kernel(double *A, double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = A[i];
#pragma endscop
}
