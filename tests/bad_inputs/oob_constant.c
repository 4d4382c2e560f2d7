/* Out of bounds with constant sizes: A[i + 1] reads A[10] when i = 9. */
#define N 10

void kernel(double A[N], double B[N])
{
  int i;
#pragma scop
  for (i = 0; i < N; i++)
    B[i] = A[i + 1];
#pragma endscop
}
