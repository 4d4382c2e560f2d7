/* Locals initialized with constants before the scop and only read inside it, PolyBench style. */
#include <math.h>

#define DATA_TYPE float
#define SCALAR_VAL(x) x##f
#define M 10

void kernel_eps(DATA_TYPE alpha, DATA_TYPE A[M], DATA_TYPE B[M])
{
  DATA_TYPE eps = SCALAR_VAL(0.1);
  DATA_TYPE two = 2;
  int m = M - 2;
  double third = 1.0 / 3.0;
  int i;
#pragma scop
  for (i = 0; i < m; i++)
    B[i] = A[i] <= eps ? eps : A[i] * two + third;
  for (i = m; i < M; i++)
    B[i] = exp(alpha * eps) * A[i];
#pragma endscop
}
