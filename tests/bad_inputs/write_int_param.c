/* An integer (structure) parameter must not change inside the kernel. */
void kernel(int n, double A[n])
{
  int i;
#pragma scop
  n = 5;
  for (i = 0; i < n; i++)
    A[i] = 1.0;
#pragma endscop
}
