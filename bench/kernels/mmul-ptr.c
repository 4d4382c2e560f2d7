/* Matrix multiply as written for HLS tools: flat pointers indexed row-major by hand, an accumulator
   local to the output element. */
#ifndef N
#define N 20
#endif
#ifndef M
#define M 24
#endif
#ifndef K
#define K 28
#endif

void mmul_ptr(const float *a, const float *b, float *c)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      float acc = 0.0f;
      for (int p = 0; p < K; p++)
        acc += a[i * K + p] * b[p * M + j];
      c[i * M + j] = acc;
    }
}
