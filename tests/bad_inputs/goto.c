/* goto inside the scop. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    if (i == 3)
      goto skip;
    A[i] = 1.0;
  skip:
    ;
  }
#pragma endscop
}
