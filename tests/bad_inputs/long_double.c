/* long double has no hardware type. */
void kernel(long double alpha, double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] * 2.0;
#pragma endscop
}
