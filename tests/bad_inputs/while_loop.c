/* A while loop inside the scop. */
void kernel(double A[10])
{
  int i;
#pragma scop
  i = 0;
  while (i < 10) {
    A[i] = 0.0;
    i++;
  }
#pragma endscop
}
