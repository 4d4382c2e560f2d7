/* An old-style (K&R) function definition. */
void kernel(A)
  double A[10];
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = 1.0;
#pragma endscop
}
