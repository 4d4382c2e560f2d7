/* GNU statement expression. */
void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = ({ double t = 2.0; t * t; });
#pragma endscop
}
