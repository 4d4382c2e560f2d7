/* A condition on data: if-converted, `B[i]` keeps its value where `A[i] <= 0`. */
void kernel(double A[10], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    if (A[i] > 0)
      B[i] = A[i];
#pragma endscop
}
