/* Pointer parameters indexed row-major by hand, as HLS code often passes arrays: a 5-point stencil
   on `in[i * W + j]`, an update in place through a pointer, rows declared `float r[][W]` and
   `float (*c)[W]`, and a vector whose extent is the largest index read. */
#define H 9
#define W 7

void pointer_rows(const float *in, float *out, float r[][W], float (*c)[W], const double *v, double *acc)
{
#pragma scop
  for (int i = 1; i < H - 1; i++)
    for (int j = 1; j < W - 1; j++)
      out[i * W + j] = 0.25f * (in[(i - 1) * W + j] + in[(i + 1) * W + j] + in[i * W + j - 1] + in[i * W + j + 1]);
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++)
      out[i * W + j] = out[i * W + j] * 2.0f - r[i][j];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < W; j++)
      c[i][j] = r[2 * i][j] + c[i][W - 1 - j];
  for (int k = 0; k < 5; k++)
    acc[k] = v[2 * k] * v[2 * k + 1];
#pragma endscop
}
