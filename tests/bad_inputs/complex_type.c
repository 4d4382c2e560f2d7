/* Complex numbers are not supported. */
void kernel(double _Complex z, double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] * 2.0;
#pragma endscop
}
