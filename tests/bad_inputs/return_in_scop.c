/* return inside the scop. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    A[i] = 1.0;
    if (i == 4)
      return;
  }
#pragma endscop
}
