/* Float kernel whose parameter-only subexpressions use functions no datapath has (expf, powf), a
   typedef cast of an integer scalar and a constant call: each is hoisted and computed once by gcc on
   the host, then fed to the top as an input port. */
#include <math.h>

#define N 8

typedef float real;

void kernel(int n, int k, float alpha, real A[N][N], real x[N], real y[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    y[i] = x[i] * expf(-alpha) + sqrtf(2.0f);
    for (j = 0; j < n; j++)
      y[i] += A[i][j] * powf(fabsf(alpha), 2.5f) - x[j] / (real)(k + 1) + (alpha > 0.0f ? alpha : -alpha);
  }
#pragma endscop
}

int main(void)
{
  static real A[N][N], x[N], y[N];
  kernel(N, 3, 0.25f, A, x, y);
  return 0;
}
