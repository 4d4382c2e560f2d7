// The isl scheduler fails on this program ("unable to carry dependences"): --tile auto crashed with
// an internal error; it now falls back to the untiled network (fuzzer seed 608).
// check-tile: auto
#include <stdint.h>
#include <math.h>

void kernel(int16_t A[3], int32_t B[5][4], int32_t C[5])
{
  int i, j, k;
  int32_t t0;
#pragma scop
  for (i = 0; i <= 1; i++) {
    t0 = B[1][i + 2] + A[i];
    for (j = i; j < i + 4; j += 2) {
      for (k = 0; k < j; k++) {
        t0 += B[i][j];
      }
    }
    C[i] = (B[3][i] <= (i - 1) ? (C[i + 2] == i ? B[4][i] : i) : (B[4][i] << 2)) + t0;
  }
#pragma endscop
}
