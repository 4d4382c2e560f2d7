/* A local initialized before the scop from array data: a computation outside the scop. */
void kernel(double A[10])
{
  double first = A[0];
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = A[i] - first;
#pragma endscop
}
