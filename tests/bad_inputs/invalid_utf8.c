/* OK so far */
void kernel(double A[10])
{
  int i;
  /* café */
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = 1.0;
#pragma endscop
}
