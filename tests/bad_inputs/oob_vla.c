/* Out of bounds in a VLA: A[i + 1] reads A[n] at i = n - 1, for every n. */
void kernel(int n, double A[n], double B[n])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = A[i + 1];
#pragma endscop
}
