/* LeNet-5 C3-like layer: 6 input maps of 14x14, 16 output maps of 10x10, 5x5 kernels, float. */
#ifndef CI
#define CI 6
#endif
#ifndef CO
#define CO 16
#endif
#ifndef H
#define H 14
#endif
#define K 5
#define HO (H - K + 1)
void kernel_lenet_c3(float in[CI][H][H], float w[CO][CI][K][K], float bias[CO], float out[CO][HO][HO])
{
  int o, y, x, c, ky, kx;
#pragma scop
  for (o = 0; o < CO; o++)
    for (y = 0; y < HO; y++)
      for (x = 0; x < HO; x++) {
        out[o][y][x] = bias[o];
        for (c = 0; c < CI; c++)
          for (ky = 0; ky < K; ky++)
            for (kx = 0; kx < K; kx++)
              out[o][y][x] += in[c][y + ky][x + kx] * w[o][c][ky][kx];
      }
#pragma endscop
}
