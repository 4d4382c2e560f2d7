/* Indirect (data-dependent) subscript: A[B[i]]. */
void kernel(double A[10], int B[10], double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = A[B[i]];
#pragma endscop
}
