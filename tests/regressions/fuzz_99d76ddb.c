// Fixed: privatization gives the scalar t0 a copy per i; the tiler then puts its writer and its reader
// in different tile bands, and the flow went to a STORE process for a local, which has no off-chip
// memory (KeyError in the DPN simulator). Locals now stay on chip between bands.
// check-tile: auto
// fuzz regression: seed 737 (default profile, python -m bench.fuzz); found 2026-11-23 by tests/fuzz
// failure signature: tiled / exception / KeyError@dpn/simulate.py:try_step
// check-seeds: 737
// shrunk from 22 to 17 lines
#include <stdint.h>
#include <math.h>

void kernel(int16_t A[6], float B[4][5])
{
  int i, j;
  float t0;
#pragma scop
  for (i = 0; i <= 3; i++) {
    t0 = 0.0f;
    for (j = 0; j <= 2; j++) {
      t0 += (float)A[j];
      A[i] = (int32_t)fmax(fmin(B[i][j], 100000.0), -100000.0);
    }
  }
#pragma endscop
}
