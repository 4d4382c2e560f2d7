/* i takes 0, 2, 4, ...: it never equals 7, so the loop never ends. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i != 7; i += 2)
    A[i / 2 % 10] = 1.0;
#pragma endscop
}
