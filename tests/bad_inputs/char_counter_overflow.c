/* A signed char counter cannot reach 200: the loop never ends in C. */
void kernel(double A[200])
{
  signed char c;
#pragma scop
  for (c = 0; c < 200; c++)
    A[c] = 1.0;
#pragma endscop
}
