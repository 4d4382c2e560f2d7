/* The loop body changes its own counter. */
void kernel(double A[20])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    A[i] = 1.0;
    i = i + 1;
  }
#pragma endscop
}
