// fixed: rtl deadlock, LOAD_C stuck (is_last `x0 == 3`, next maps odd x0 to itself) in about half the compilations
// fuzz regression: seed 400 (int profile, python -m bench.fuzz --n 600 --rtl-every 25); found 2026-11-22 by tests/fuzz
// failure signature: rtl / deadlock
// check-seeds: 400
// check-compiles: 8
// shrunk from 22 to 15 lines
// diagnosis: compiling this kernel gives one of two LOAD_C designs (isl returns different, equal,
// representations from run to run); in the bad one (about half the runs) LOAD_C's is_last is
// `x0 == 3` instead of `x0 == 11` and its next-iteration function maps odd x0 to itself.
// fix: isl returned a wrong lexmax on the in-memory LOAD_C schedule after lexmin (an isl internal state
// that also varied with allocation order); every network object is now re-read from its printed form
// (`isl_utils.reread`), which is exact and the same in every run.
#include <stdint.h>
#include <math.h>

void kernel(uint8_t C[12], uint8_t alpha)
{
  int i, j;
#pragma scop
  for (i = 0; i < 9; i += 2) {
    for (j = (i - 2 > 0 ? i - 2 : 0); j < i + 3; j++) {
      C[i + 1] = 1;
      C[j] = (C[j + 1] + C[j]) + alpha;
    }
  }
#pragma endscop
}
