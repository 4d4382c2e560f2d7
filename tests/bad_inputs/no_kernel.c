/* Several functions, none marked with #pragma scop. */
void scale(double A[10])
{
  int i;
  for (i = 0; i < 10; i++)
    A[i] = A[i] * 2.0;
}

void shift(double A[10], double B[10])
{
  int i;
  for (i = 0; i < 10; i++)
    B[i] = A[i] + 1.0;
}
