/* Jumps that skip the rest of a block: `if (c) return;` at the top of a void kernel (on data here),
   and `if (c) continue;`, `if (c) { ...; continue; }` in a loop body, on data and affine. */
#define N 16

void skip_rest(const float A[N], float B[N], int C[N], float s[1])
{
  s[0] = 0.0f;
  if (A[0] > 0.9f)
    return;
  for (int i = 0; i < N; i++) {
    C[i] = 0;
    if (A[i] < 0.0f)
      continue;
    B[i] = A[i] * 2.0f;
    if (i % 4 == 0) {
      C[i] = 7;
      continue;
    }
    C[i] = 1;
    s[0] += A[i];
  }
}
