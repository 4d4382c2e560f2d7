/* An #error directive. */
#ifndef N
#error "define N with -DN=..."
#endif

void kernel(double A[N])
{
  int i;
#pragma scop
  for (i = 0; i < N; i++)
    A[i] = 1.0;
#pragma endscop
}
