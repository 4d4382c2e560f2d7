/*
 * box-blur-clamp: (2R+1) x (2R+1) box blur of an H x W uint8 image with
 * the window clamped at the borders (edge pixels average fewer
 * neighbours).  The window loops have MIN/MAX macro bounds:
 *   sum[i][j] = sum over ii in [max(i-R,0), min(i+R,H-1)],
 *                        jj in [max(j-R,0), min(j+R,W-1)] of img[ii][jj]
 *   out[i][j] = (uint8_t)(sum[i][j] / window size)   (integer division)
 * sum is uint16 (at most 9 * 255 with R = 1); the window size is
 * computed from the counters with the same macros.
 */
#include <stdint.h>

#ifndef H
#define H 12
#endif
#ifndef W
#define W 12
#endif
#ifndef R
#define R 1
#endif

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void kernel_box_blur_clamp(uint8_t img[H][W], uint16_t sum[H][W],
                           uint8_t out[H][W])
{
  int i, j, ii, jj;

#pragma scop
  for (i = 0; i < H; i++)
    for (j = 0; j < W; j++) {
      sum[i][j] = 0;
      for (ii = MAX(i - R, 0); ii <= MIN(i + R, H - 1); ii++)
        for (jj = MAX(j - R, 0); jj <= MIN(j + R, W - 1); jj++)
          sum[i][j] += img[ii][jj];
      out[i][j] = (uint8_t)(sum[i][j]
                            / ((MIN(i + R, H - 1) - MAX(i - R, 0) + 1)
                               * (MIN(j + R, W - 1) - MAX(j - R, 0) + 1)));
    }
#pragma endscop
}
