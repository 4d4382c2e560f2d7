/* exp() from <math.h> is not one of the supported math functions. */
#include <math.h>

void kernel(double A[10], double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = 2.0 * exp(A[i]);
#pragma endscop
}
