/* A global variable in a loop bound: its value is whatever the program last stored. */
int n = 10;

void kernel(double A[10], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = A[i];
#pragma endscop
}
