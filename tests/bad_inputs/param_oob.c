/* Fine for n <= 10, out of bounds for the n given on the command line. */
void kernel(int n, double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    A[i] = 1.0;
#pragma endscop
}
