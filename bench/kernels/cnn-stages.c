/* A small convolutional network written as HLS code is: one `void` function per stage (a 3x3
   convolution over C output channels, an in-place ReLU and a 2x2 max-pool, these two with `if`s on data),
   called from a top that returns the largest output. */
#include <math.h>
#ifndef H
#define H 14
#endif
#define K 3
#ifndef C
#define C 4
#endif
#define P ((H - K + 1) / 2)

static void conv(const float in[H][H], const float w[C][K][K], float out[C][H - K + 1][H - K + 1])
{
  for (int c = 0; c < C; c++)
    for (int i = 0; i < H - K + 1; i++)
      for (int j = 0; j < H - K + 1; j++) {
        float acc = 0.0f;
        for (int u = 0; u < K; u++)
          for (int v = 0; v < K; v++)
            acc += w[c][u][v] * in[i + u][j + v];
        out[c][i][j] = acc;
      }
}

static void relu(float x[C][H - K + 1][H - K + 1])
{
  for (int c = 0; c < C; c++)
    for (int i = 0; i < H - K + 1; i++)
      for (int j = 0; j < H - K + 1; j++)
        if (x[c][i][j] < 0.0f)
          x[c][i][j] = 0.0f;
}

static void pool(const float x[C][H - K + 1][H - K + 1], float y[C][P][P])
{
  for (int c = 0; c < C; c++)
    for (int i = 0; i < P; i++)
      for (int j = 0; j < P; j++) {
        float m = x[c][2 * i][2 * j];
        for (int u = 0; u < 2; u++)
          for (int v = 0; v < 2; v++)
            if (x[c][2 * i + u][2 * j + v] > m)
              m = x[c][2 * i + u][2 * j + v];
        y[c][i][j] = m;
      }
}

float net(const float in[H][H], const float w[C][K][K], float y[C][P][P])
{
  float t[C][H - K + 1][H - K + 1];
  conv(in, w, t);
  relu(t);
  pool(t, y);
  float best = y[0][0][0];
  for (int c = 0; c < C; c++)
    for (int i = 0; i < P; i++)
      for (int j = 0; j < P; j++)
        best = fmaxf(best, y[c][i][j]);
  return best;
}
