/* A pointer to pointers: rows anywhere in memory, no array. */
void kernel(double **A, double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = A[i][0];
#pragma endscop
}
