/* A do/while loop inside the scop. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    do {
      A[i] = A[i] * 0.5;
    } while (A[i] > 1.0);
#pragma endscop
}
