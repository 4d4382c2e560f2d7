/*
 * lifting-53: two levels of the reversible CDF 5/3 integer wavelet (as in
 * JPEG 2000 lossless) on each of M rows of N = 4K + 1 int32 samples, in
 * place, with symmetric extension at both ends.
 *   level 1, odd samples  (i = 1, 3, ...; i += 2): x[i] -= (x[i-1] + x[i+1]) >> 1
 *            even samples (i = 2, 4, ...; i += 2): x[i] += (x[i-1] + x[i+1] + 2) >> 2
 *   level 2, the same on the even samples only, with stride 4 (i += 4)
 * >> on a negative value is an arithmetic shift (floor), as on every
 * mainstream compiler.
 */
#include <stdint.h>

#ifndef M
#define M 6
#endif
#ifndef K
#define K 8
#endif
/* N = 4K + 1 samples per row: the level-2 steps (i += 4) end exactly on N - 1 */
#define N (4 * (K) + 1)

void kernel_lifting_53(int32_t x[M][N])
{
  int r, i;

#pragma scop
  for (r = 0; r < M; r++) {
    /* level 1: predict (odd), then update (even) */
    for (i = 1; i < N - 1; i += 2)
      x[r][i] -= (x[r][i - 1] + x[r][i + 1]) >> 1;
    x[r][0] += (x[r][1] + x[r][1] + 2) >> 2;
    for (i = 2; i < N - 1; i += 2)
      x[r][i] += (x[r][i - 1] + x[r][i + 1] + 2) >> 2;
    x[r][N - 1] += (x[r][N - 2] + x[r][N - 2] + 2) >> 2;
    /* level 2 on the samples 0, 2, 4, ...: predict (2 mod 4), update (0 mod 4) */
    for (i = 2; i < N - 1; i += 4)
      x[r][i] -= (x[r][i - 2] + x[r][i + 2]) >> 1;
    x[r][0] += (x[r][2] + x[r][2] + 2) >> 2;
    for (i = 4; i < N - 1; i += 4)
      x[r][i] += (x[r][i - 2] + x[r][i + 2] + 2) >> 2;
    x[r][N - 1] += (x[r][N - 3] + x[r][N - 3] + 2) >> 2;
  }
#pragma endscop
}
