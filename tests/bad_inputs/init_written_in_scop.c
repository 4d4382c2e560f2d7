/* A local initialized with a constant before the scop, then written inside it: not a constant. */
void kernel(double A[10])
{
  double sum = 0.0;
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    sum += A[i];
    A[i] = sum;
  }
#pragma endscop
}
