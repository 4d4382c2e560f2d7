/* A pointer parameter behind a typedef. */
typedef double *vec_t;

void kernel(vec_t A, double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = A[i];
#pragma endscop
}
