// dpn-synth-args: --param m=16 --param n=20
/*
 * gemv-float: single-precision matrix-vector product.
 *   y := alpha * A * x + 0.5f * y
 * A is m x n (float); tmp holds A * x.  All arithmetic is float (literal
 * constants carry the f suffix so nothing is promoted to double).
 * Sizes are run-time parameters (C99 VLA parameters).
 */

void kernel_gemv_float(int m, int n, float alpha, float A[m][n], float x[n],
                       float y[m], float tmp[m])
{
  int i, j;

#pragma scop
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0f;
    for (j = 0; j < n; j++)
      tmp[i] += A[i][j] * x[j];
    y[i] = alpha * tmp[i] + 0.5f * y[i];
  }
#pragma endscop
}
