/* `if (c) break;` with an affine c: later iterations run guarded by the break flag and change nothing. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++) {
    if (i == 5)
      break;
    A[i] = 1.0;
  }
#pragma endscop
}
