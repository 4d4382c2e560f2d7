/* Mixed integer widths: uint8 pixels, int16 weights, int32 accumulation, shift and saturation. */
#include <stdint.h>

#ifndef H
#define H 10
#endif
#ifndef W
#define W 12
#endif

void kernel_mixed_width(uint8_t img[H][W], int16_t wt[3], int32_t acc[H][W], uint8_t out[H][W])
{
  int i, j;
#pragma scop
  for (i = 0; i < H; i++)
    for (j = 1; j < W - 1; j++) {
      acc[i][j] = wt[0] * img[i][j - 1] + wt[1] * img[i][j] + wt[2] * img[i][j + 1];
      out[i][j] = (uint8_t)(acc[i][j] < 0 ? 0 : (acc[i][j] >> 4) > 255 ? 255 : (acc[i][j] >> 4));
    }
#pragma endscop
}
