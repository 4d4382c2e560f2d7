// xfail: interp mismatch: 4 elements differ (arrays A, C); first A[8]: expected 1506530545, got 1238095089
// fuzz regression: seed 766 (default profile, python -m bench.fuzz); found 2026-11-23 by tests/fuzz
// failure signature: interp / mismatch
// check-seeds: 766
// Cause: `(A[i] * 2) / 16` overflows int32 for large A[i]; gcc folds it to `A[i] / 8` even at -O0
// (signed overflow is undefined, fold-const's extract_muldiv), while dpn-synth wraps the product. Known,
// not fixed: matching gcc here means replicating its constant folding of signed multiply-divide.
// shrunk from 28 to 13 lines
#include <stdint.h>
#include <math.h>

void kernel(int32_t A[12], int32_t B[9], int32_t C[2][9])
{
  int i;
#pragma scop
  for (i = 0; i < 9; i++) {
    C[1][i] = (A[i] * (2)) / 16;
    A[i + 1] = ((i - B[i]) + C[0][i]) * C[1][i];
  }
#pragma endscop
}
