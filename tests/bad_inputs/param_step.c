/* The step is a parameter, not a constant. */
void kernel(int s, double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i += s)
    A[i] = 1.0;
#pragma endscop
}
