/* A condition dividing by zero: an error, not a condition on data to if-convert. */
void kernel(int A[10], int B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    if (i / 0 > 1 && A[i] > 0)
      B[i] = 1;
#pragma endscop
}
