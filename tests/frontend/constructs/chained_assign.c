/* Chained assignments `a = b = e`: C assigns right to left, and the value of `b = e` is e converted to
   b's type, which is then converted to a's type.  Targets are array elements and local scalars. */
#define N 12

void chained(double A[N], float B[N], int C[N], double D[N], double E[N][N])
{
  short k;
  float t;
  double s;
  int i, j;
#pragma scop
  for (i = 0; i < N; i++) {
    C[i] = k = B[i] = A[i] * 37.5;      /* double -> float -> short -> int */
    D[i] = t = A[i] + 0.1;              /* D gets the value rounded to float */
    A[i] = B[i] = B[i] + (float) A[i];  /* the right side reads the middle target */
    D[i] += s = t * 2.0;                /* compound outer assignment */
    double u = s = s * t;               /* a declaration initialized by a chain */
    D[i] -= u;
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      E[i][j] = E[j][i] = A[i] - D[j];  /* both targets in one array */
#pragma endscop
}
