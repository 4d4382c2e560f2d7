/* A global variable read inside the kernel. */
double scale;

void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] * scale;
#pragma endscop
}
