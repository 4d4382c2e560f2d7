/* A scalar parameter is read-only in the kernel. */
void kernel(double alpha, double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    alpha = alpha * 0.5;
    A[i] = alpha;
  }
#pragma endscop
}
