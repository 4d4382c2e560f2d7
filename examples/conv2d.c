/*
 * conv2d: "valid" 2-D convolution (cross-correlation) of an H x W image
 * with a constant-size 3 x 3 weight array K passed as a parameter.
 * out is (H-2) x (W-2) (double).
 */
#ifndef H
#define H 18
#endif
#ifndef W
#define W 20
#endif

void kernel_conv2d(double K[3][3], double in[H][W], double out[H - 2][W - 2])
{
  int i, j, ki, kj;

#pragma scop
  for (i = 0; i < H - 2; i++)
    for (j = 0; j < W - 2; j++) {
      out[i][j] = 0.0;
      for (ki = 0; ki < 3; ki++)
        for (kj = 0; kj < 3; kj++)
          out[i][j] += K[ki][kj] * in[i + ki][j + kj];
    }
#pragma endscop
}
