// fixed: isl compute_flow gave a wrong last writer here; hls.poly.isl_utils.last_writer computes it exactly
// fuzz regression: seed 284 (default profile, python -m bench.fuzz); found 2026-11-22 by tests/fuzz
// failure signature: dataflow / mismatch
// check-seeds: 284
// shrunk from 25 to 20 lines
#include <stdint.h>
#include <math.h>

void kernel(double A[1][2], double C[5])
{
  int i, j, k;
#pragma scop
  for (i = 0; i <= 4; i += 2) {
    for (j = (i - 3 > 0 ? i - 3 : 0); j <= 3; j++) {
      for (k = 0; k <= i; k++) {
        A[0][0] = C[k];
        C[k] = 0.0;
      }
    }
    for (j = i; j < i + 2; j++) {
      C[1] = 1.0;
    }
  }
#pragma endscop
}
