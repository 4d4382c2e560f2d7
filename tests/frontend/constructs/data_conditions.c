/* `if`s on data, if-converted: a rectified copy with `else`, a running maximum with its index
   (two targets under one test that the first assignment changes), a clamp by nested tests, an
   affine and a data conjunct, a compound assignment and a loop inside a data branch, a local
   declared in a branch, and integer tests. */
#define N 16

void data_conditions(float A[N], float B[N], float M[N][4], float C[N][4], int K[N], int out[4], float best[1])
{
  float m;
  int at, pos, neg;
#pragma scop
  m = A[0];
  at = 0;
  pos = 0;
  neg = 0;
  for (int i = 0; i < N; i++) {
    if (A[i] > 0.0f)
      B[i] = A[i];
    else
      B[i] = -0.5f * A[i];
  }
  for (int i = 1; i < N; i++)
    if (A[i] > m) {
      m = A[i];
      at = i;
    }
  for (int i = 0; i < N; i++) {
    if (B[i] > 1.0f) {
      if (B[i] > 2.0f)
        B[i] = 2.0f;
      else
        B[i] = B[i] * B[i];
    }
    if (i > 0 && A[i] < A[i - 1])
      B[i] += 0.25f;
    if (K[i] % 3 != 0) {
      float w = A[i] * 0.5f;
      for (int j = 0; j < 4; j++)
        C[i][j] += w * M[i][j];
    }
    if (K[i] >= 0)
      pos += K[i];
    else
      neg -= K[i];
  }
  out[0] = at;
  out[1] = pos;
  out[2] = neg;
  out[3] = pos - neg;
  best[0] = m;
#pragma endscop
}
