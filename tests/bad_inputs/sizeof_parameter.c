/* `sizeof` of an array parameter: a pointer in C, not the array's size. */
void kernel(double A[10], int B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = sizeof(A) + i;
#pragma endscop
}
