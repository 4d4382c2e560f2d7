/* A comment that never ends. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = 1.0; /* set to one
#pragma endscop
}
