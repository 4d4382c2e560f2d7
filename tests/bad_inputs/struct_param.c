/* A struct passed by value. */
struct coeffs {
  double a, b;
};

void kernel(struct coeffs k, double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] * 2.0;
#pragma endscop
}
