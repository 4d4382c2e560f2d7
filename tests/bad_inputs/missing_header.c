/* An included header that does not exist. */
#include "no_such_header.h"

void kernel(double A[10])
{
  int i;
#pragma scop
  for (i = 0; i < 10; i++)
    A[i] = 1.0;
#pragma endscop
}
