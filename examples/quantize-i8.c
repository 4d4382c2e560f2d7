/*
 * quantize-i8: block-wise symmetric int8 quantisation and dequantisation
 * of NB blocks of BL floats (as for neural-network weights).
 *   scale[b] = max_i |x[b][i]| / 127        (fmaxf/fabsf, then /=)
 *   q[b][i]  = (int8_t)(int)(x / scale +- 0.5f)   (round half away from 0)
 *   xr[b][i] = (float)q[b][i] * scale[b]    (dequantise)
 *   err[b]   = sum_i |x - xr|  (float),  qs[b] = sum_i q (int) as double
 * |x / scale| <= 127 (plus rounding), so the float -> int conversion is
 * always in range.  scale starts at 1e-6f so it is never 0.
 */
#include <math.h>
#include <stdint.h>

#ifndef NB
#define NB 12
#endif
#ifndef BL
#define BL 32
#endif

void kernel_quantize_i8(float x[NB][BL], float scale[NB], int8_t q[NB][BL],
                        float xr[NB][BL], float err[NB], double qs[NB])
{
  int b, i;

#pragma scop
  for (b = 0; b < NB; b++) {
    scale[b] = 1e-6f;
    for (i = 0; i < BL; i++)
      scale[b] = fmaxf(scale[b], fabsf(x[b][i]));
    scale[b] /= 127.0f;
    err[b] = 0.0f;
    qs[b] = 0.0;
    for (i = 0; i < BL; i++) {
      q[b][i] = (int8_t)(int)(x[b][i] / scale[b]
                              + (x[b][i] >= 0.0f ? 0.5f : -0.5f));
      xr[b][i] = (float)q[b][i] * scale[b];
      err[b] += fabsf(x[b][i] - xr[b][i]);
      qs[b] += (double)q[b][i];
    }
  }
#pragma endscop
}
