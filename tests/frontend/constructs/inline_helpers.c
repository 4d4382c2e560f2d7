/* The file's own expression functions called from the kernel: inlined with C's conversions of the
   arguments to the parameters' types and of the result to the return type, nested calls too. */
#include <math.h>
static inline float sq(float x) { return x * x; }
static float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
static int half(int n) { return n / 2; }
static double mix(double a, float b) { return a * 0.25 + fminf(b, 1.0f); }
void inline_helpers(float A[16], float B[16], int C[16], double D[16])
{
  int i;
#pragma scop
  for (i = 0; i < 16; i++) {
    B[i] = clampf(sq(A[i]) - 1.0f, -2.0f, 2.0f);
    C[i] = half(C[i]) + half(i + 1);
    D[i] = mix(D[i], D[i]);
  }
#pragma endscop
}
