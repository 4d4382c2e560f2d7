/* A for loop without a condition. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; ; i++)
    A[i] = 1.0;
#pragma endscop
}
