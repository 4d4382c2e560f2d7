/* A const local whose initializer divides by zero. */
void kernel(int A[10])
{
  const int step = 10 / (5 - 5);
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] * step;
#pragma endscop
}
