/* The loops run to a parameter n that only --param can give (sim, compile). */
void kernel(int n, double A[n], double B[n])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = 2.0 * A[i];
#pragma endscop
}
