/*
 * decimate-f32: two-stage decimation by 4 (float32).
 *   stage 1: y1[i/2] = 0.5f * sum_k h1[k] * x[i + k]     for even i  (i += 2)
 *   stage 2: y2[i/2] = sum_k h2[k] * y1[i + k] * 1.5f    for even i  (i += 2)
 * Every output keeps its FIR sum in place with +=, and *= applies a
 * gain.  The loops producing outputs step by 2 and write y[i / 2].
 * All constants carry the f suffix, so nothing is promoted to double.
 */
#ifndef N
#define N 64
#endif
#ifndef T1
#define T1 8
#endif
#ifndef T2
#define T2 6
#endif

void kernel_decimate_f32(float x[N + 2 * T2 + T1], float h1[T1], float h2[T2],
                         float y1[N / 2 + T2], float y2[N / 4])
{
  int i, k;

#pragma scop
  for (i = 0; i < N + 2 * T2; i += 2) {
    y1[i / 2] = 0.0f;
    for (k = 0; k < T1; k++)
      y1[i / 2] += h1[k] * x[i + k];
    y1[i / 2] *= 0.5f;
  }
  for (i = 0; i < N / 2; i += 2) {
    y2[i / 2] = 0.0f;
    for (k = 0; k < T2; k++)
      y2[i / 2] += h2[k] * y1[i + k] * 1.5f;
  }
#pragma endscop
}
