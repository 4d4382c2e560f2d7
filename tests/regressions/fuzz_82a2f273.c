// fixed (isl compute_flow gave a wrong last writer; now hls.poly.isl_utils.last_writer): dataflow mismatch: read S0.r0 at [5, 8]: dataflow says S0[1, -1], replay says S0[3, 1]
// fuzz regression: seed 1022 (default profile, python -m bench.fuzz, generator revision of 2026-11-22 before the -Woverflow fix); found 2026-11-22 by tests/fuzz
// failure signature: dataflow / mismatch
// check-seeds: 0
// shrunk from 36 to 14 lines; also a DPN mismatch (B[0] gets 14 of its 28 increments)
#include <stdint.h>
#include <math.h>

void kernel(float B[1])
{
  int j, k;
#pragma scop
  for (j = 1; j <= 8; j += 2) {
    for (k = 8; k >= j - 2; k--) {
      B[0] += 1.0f;
    }
  }
#pragma endscop
}
