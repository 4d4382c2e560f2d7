/* `if (c) continue;` in a loop body: the rest of the body runs where c fails. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    if (i % 2 == 1)
      continue;
    A[i] = 1.0;
  }
#pragma endscop
}
