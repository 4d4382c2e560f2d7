/*
 * jacobi-1d: 3-point Jacobi stencil, T time steps, ping-pong between
 * A and B (both length N, double).  Boundary cells are not updated.
 */
#ifndef T
#define T 8
#endif
#ifndef N
#define N 32
#endif

void kernel_jacobi_1d(double A[N], double B[N])
{
  int t, i;

#pragma scop
  for (t = 0; t < T; t++) {
    for (i = 1; i < N - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (i = 1; i < N - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
#pragma endscop
}
