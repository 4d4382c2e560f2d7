/* The error is in the included header, and must be reported there. */
#include "bad_header.h"

void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = SCALE;
#pragma endscop
}
