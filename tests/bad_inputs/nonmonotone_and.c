/* The loop stops at i = 1, but the polyhedron {i < n, i even} has more points. */
void kernel(int n, double A[n])
{
  int i;
#pragma scop
  for (i = 0; i * 1 < n && i % 2 == 0; i++)
    A[i] = 1.0;
#pragma endscop
}
