/* A call to a function the compiler knows nothing about. */
double foo(int);

void kernel(double C[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    C[i] = foo(i);
#pragma endscop
}
