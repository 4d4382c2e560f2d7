/* switch inside the scop. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    switch (i) {
    case 0: A[i] = 1.0; break;
    default: A[i] = 2.0;
    }
#pragma endscop
}
