/* A loop bound read from data: the iteration domain depends on array contents. */
void kernel(int K[10], double A[10][10], double B[10])
{
  int i, j;
#pragma scop
  for (i = 0; i < 10; i++)
    for (j = 0; j < K[i]; j++)
      B[i] += A[i][j];
#pragma endscop
}
