/* Division by the constant zero in a subscript. */
void kernel(double A[10], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = A[i / 0];
#pragma endscop
}
