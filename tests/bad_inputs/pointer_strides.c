/* Strides that do not nest: `A` is not one row-major array. */
void kernel(int n, int m, double *A, double *C)
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      C[i * m + j] = A[i * m + j * n];
#pragma endscop
}
