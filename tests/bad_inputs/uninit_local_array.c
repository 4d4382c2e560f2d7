/* The local array t is read before it is written. */
void kernel(double A[10])
{
  int i;
  double t[10];
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = t[9 - i];
#pragma endscop
}
