/* A floating-point loop counter. */
void kernel(double A[10])
{
#pragma scop
  for (double x = 0.0; x < 10.0; x += 1.0)
    A[0] = A[0] + x;
#pragma endscop
}
