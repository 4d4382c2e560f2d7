/* i >= 0 always holds for an unsigned counter: in C this loop never ends. */
void kernel(double A[10])
{
  unsigned i;
#pragma scop
  for (i = 9; i >= 0; i--)
    A[i] = 1.0;
#pragma endscop
}
