/*
 * cubic-upsample-f32: 4x upsampling of a float32 signal by Catmull-Rom
 * cubic interpolation.  For segment i (between p[i+1] and p[i+2]):
 *   a3 = -0.5f p0 + 1.5f p1 - 1.5f p2 + 0.5f p3
 *   a2 =       p0 - 2.5f p1 + 2.0f p2 - 0.5f p3
 *   a1 = -0.5f p0 + 0.5f p2,   a0 = p1
 *   y[4i + k] = ((a3 t + a2) t + a1) t + a0   with t = (float)k * 0.25f
 * The coefficients are local float scalars declared in the i loop, t is
 * declared in the k loop and converts the loop counter with (float)k.
 */
#ifndef N
#define N 32
#endif

void kernel_cubic_upsample_f32(float p[N + 3], float y[4 * N])
{
  int i, k;

#pragma scop
  for (i = 0; i < N; i++) {
    float a3 = -0.5f * p[i] + 1.5f * p[i + 1] - 1.5f * p[i + 2] + 0.5f * p[i + 3];
    float a2 = p[i] - 2.5f * p[i + 1] + 2.0f * p[i + 2] - 0.5f * p[i + 3];
    float a1 = -0.5f * p[i] + 0.5f * p[i + 2];
    for (k = 0; k < 4; k++) {
      float t = (float)k * 0.25f;
      y[4 * i + k] = ((a3 * t + a2) * t + a1) * t + p[i + 1];
    }
  }
#pragma endscop
}
