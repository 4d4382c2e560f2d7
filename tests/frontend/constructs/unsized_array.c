/* An array parameter without a size: a pointer, sized by its accesses. */
void kernel(double A[], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = A[i];
#pragma endscop
}
