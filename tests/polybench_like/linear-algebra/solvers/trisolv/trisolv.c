/*
 * trisolv.c: look-alike of the PolyBench/C trisolv benchmark, written for
 * the dpn-synth test suite (same conventions, not a copy).
 *   forward substitution: solves L * x = b, L lower triangular
 */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* Common harness macros. */
#include <polybench.h>

/* Sizes and data type of this benchmark. */
#include "trisolv.h"


/* Deterministic input data: a well-conditioned lower-triangular L. */
static
void init_array(int n,
                DATA_TYPE POLYBENCH_2D(L,N,N,n,n),
                DATA_TYPE POLYBENCH_1D(x,N,n),
                DATA_TYPE POLYBENCH_1D(b,N,n))
{
  int i, j;

  for (i = 0; i < n; i++) {
    x[i] = SCALAR_VAL(-1.0);
    b[i] = (DATA_TYPE) (i % 9) + SCALAR_VAL(1.0);
    for (j = 0; j < n; j++) {
      if (j < i)
        L[i][j] = (DATA_TYPE) ((i + 3 * j) % 5 + 1) / (10 * n);
      else if (j == i)
        L[i][j] = SCALAR_VAL(1.0) + (DATA_TYPE) i / n;
      else
        L[i][j] = SCALAR_VAL(0.0);
    }
  }
}


/* Dump the live-out array x. */
static
void print_array(int n,
                 DATA_TYPE POLYBENCH_1D(x,N,n))
{
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("x");
  for (i = 0; i < n; i++) {
    if (i % 20 == 0)
      fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x[i]);
  }
  POLYBENCH_DUMP_END("x");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the whole function is timed. */
static
void kernel_trisolv(int n,
                    DATA_TYPE POLYBENCH_2D(L,N,N,n,n),
                    DATA_TYPE POLYBENCH_1D(x,N,n),
                    DATA_TYPE POLYBENCH_1D(b,N,n))
{
  int i, j;

#pragma scop
  for (i = 0; i < _PB_N; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}


int main(int argc, char** argv)
{
  /* Problem size. */
  int n = N;

  /* Variable declaration and allocation. */
  POLYBENCH_2D_ARRAY_DECL(L,DATA_TYPE,N,N,n,n);
  POLYBENCH_1D_ARRAY_DECL(x,DATA_TYPE,N,n);
  POLYBENCH_1D_ARRAY_DECL(b,DATA_TYPE,N,n);

  /* Initialize the arrays. */
  init_array(n, POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(b));

  /* Start timer. */
  polybench_start_instruments;

  /* Run the kernel. */
  kernel_trisolv(n, POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(b));

  /* Stop and print timer. */
  polybench_stop_instruments;
  polybench_print_instruments;

  /* Keep the result live; dump it with -DPOLYBENCH_DUMP_ARRAYS. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(x)));

  /* Free the arrays. */
  POLYBENCH_FREE_ARRAY(L);
  POLYBENCH_FREE_ARRAY(x);
  POLYBENCH_FREE_ARRAY(b);

  return 0;
}
