/* `break` inside a branch that is not the loop body's own statement. */
void kernel(double A[10], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    if (A[i] > 1.0) {
      if (A[i] > 2.0)
        break;
      B[i] = 1.0;
    }
    B[i] += 3.0;
  }
#pragma endscop
}
