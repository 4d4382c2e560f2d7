/* x is not declared anywhere. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = x;
#pragma endscop
}
