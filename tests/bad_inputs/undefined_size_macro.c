/* N is never defined: the array size is an unknown identifier. */
void kernel(double A[N])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = 1.0;
#pragma endscop
}
