/* A computation after the scop: it would escape synthesis. */
int kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = 1.0;
#pragma endscop
  return i;
}
