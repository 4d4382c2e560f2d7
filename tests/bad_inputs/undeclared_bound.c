/* M is never defined: a loop bound names a forgotten size macro. */
void kernel(double A[100])
{
  int i;
#pragma scop
  for (i = 0; i < M; i++)
    A[i] = 1.0;
#pragma endscop
}
