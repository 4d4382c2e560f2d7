/* A syntax error: a binary operator without its right operand. */
void kernel(double A[10], double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = A[i] + ;
#pragma endscop
}
