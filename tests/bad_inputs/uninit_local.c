/* s is read before anything is written to it. */
void kernel(double A[10])
{
  int i;
  double s;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] + s;
#pragma endscop
}
