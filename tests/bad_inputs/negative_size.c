/* An array with a negative size. */
void kernel(double A[-4], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = 1.0;
#pragma endscop
}
