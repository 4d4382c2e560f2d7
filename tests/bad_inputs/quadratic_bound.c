/* Quadratic loop bound: j < i*i. */
void kernel(double A[10][100])
{
  int i, j;
#pragma scop
  for (i = 0; i < 10; i++)
    for (j = 0; j < i * i; j++)
      A[i][j] = 0.0;
#pragma endscop
}
