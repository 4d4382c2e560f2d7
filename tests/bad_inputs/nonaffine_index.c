/* Non-affine subscript: the product of two loop counters. */
void kernel(double A[100], double C[10][10])
{
  int i, j;
#pragma scop
  for (i = 0; i < 10; i++)
    for (j = 0; j < 10; j++)
      C[i][j] = A[i * j];
#pragma endscop
}
