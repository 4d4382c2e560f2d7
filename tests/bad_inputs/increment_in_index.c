/* An increment hidden inside a subscript. */
void kernel(double A[10], double B[10])
{
  int i, j;
#pragma scop
  j = 0;
  for (i = 0; i < 10; i++)
    B[i] = A[j++];
#pragma endscop
}
