/* A local pointer aliasing a parameter. */
void kernel(double *A, double C[10])
{
  double *p = A;
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = p[i];
#pragma endscop
}
