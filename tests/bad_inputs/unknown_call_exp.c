/* exp() of array data: exp is accepted only on scalar parameters (computed once on the host). */
#include <math.h>

void kernel(double A[10], double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = 2.0 * exp(A[i]);
#pragma endscop
}
