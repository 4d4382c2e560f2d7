/* An assignment used as an operand (not a chain `a = b = e`). */
void kernel(double A[10], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = (B[i] = 1.0) + 2.0;
#pragma endscop
}
