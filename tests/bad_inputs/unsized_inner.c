/* An array parameter whose inner dimension has no size. */
void kernel(double A[][], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = A[i][0];
#pragma endscop
}
