/* A 2-D array used with one subscript (a row pointer). */
void kernel(double A[10][10], double B[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = A[i];
#pragma endscop
}
