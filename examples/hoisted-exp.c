/* Parameter-only subexpressions are hoisted: exp(-alpha) and (alpha * beta + 1.0) are computed once on
   the host (gcc, libm) and enter the hardware as top inputs; the datapath never evaluates exp. */
#include <math.h>

#define N 12
#define M 10

void kernel(int n, int m, double alpha, double beta, double A[N][M], double x[N], double y[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    y[i] = x[i] * exp(-alpha);
    for (j = 0; j < m; j++)
      y[i] = y[i] + A[i][j] * (alpha * beta + 1.0) + x[i] / exp(-alpha);
  }
#pragma endscop
}

int main(void)
{
  static double A[N][M], x[N], y[N];
  kernel(N, M, 0.5, 1.5, A, x, y);
  return 0;
}
