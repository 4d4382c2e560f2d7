/*
 * atax.c: look-alike of the PolyBench/C atax benchmark, written for the
 * dpn-synth test suite (same conventions, not a copy).
 *   y := A^T * (A * x)
 */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* Common harness macros. */
#include <polybench.h>

/* Sizes and data type of this benchmark. */
#include "atax.h"


/* Deterministic input data. */
static
void init_array(int m, int n,
                DATA_TYPE POLYBENCH_2D(A,M,N,m,n),
                DATA_TYPE POLYBENCH_1D(x,N,n))
{
  int i, j;

  for (j = 0; j < n; j++)
    x[j] = SCALAR_VAL(0.5) + (DATA_TYPE) j / n;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE) ((2 * i + j + 3) % n) / (4 * m);
}


/* Dump the live-out array y. */
static
void print_array(int n,
                 DATA_TYPE POLYBENCH_1D(y,N,n))
{
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("y");
  for (i = 0; i < n; i++) {
    if (i % 20 == 0)
      fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y[i]);
  }
  POLYBENCH_DUMP_END("y");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the whole function is timed. */
static
void kernel_atax(int m, int n,
                 DATA_TYPE POLYBENCH_2D(A,M,N,m,n),
                 DATA_TYPE POLYBENCH_1D(x,N,n),
                 DATA_TYPE POLYBENCH_1D(y,N,n),
                 DATA_TYPE POLYBENCH_1D(tmp,M,m))
{
  int i, j;

#pragma scop
  for (i = 0; i < _PB_N; i++)
    y[i] = 0;
  for (i = 0; i < _PB_M; i++) {
    tmp[i] = SCALAR_VAL(0.0);
    for (j = 0; j < _PB_N; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < _PB_N; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
#pragma endscop
}


int main(int argc, char** argv)
{
  /* Problem size. */
  int m = M;
  int n = N;

  /* Variable declaration and allocation. */
  POLYBENCH_2D_ARRAY_DECL(A,DATA_TYPE,M,N,m,n);
  POLYBENCH_1D_ARRAY_DECL(x,DATA_TYPE,N,n);
  POLYBENCH_1D_ARRAY_DECL(y,DATA_TYPE,N,n);
  POLYBENCH_1D_ARRAY_DECL(tmp,DATA_TYPE,M,m);

  /* Initialize the arrays. */
  init_array(m, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x));

  /* Start timer. */
  polybench_start_instruments;

  /* Run the kernel. */
  kernel_atax(m, n,
              POLYBENCH_ARRAY(A),
              POLYBENCH_ARRAY(x),
              POLYBENCH_ARRAY(y),
              POLYBENCH_ARRAY(tmp));

  /* Stop and print timer. */
  polybench_stop_instruments;
  polybench_print_instruments;

  /* Keep the result live; dump it with -DPOLYBENCH_DUMP_ARRAYS. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(y)));

  /* Free the arrays. */
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(x);
  POLYBENCH_FREE_ARRAY(y);
  POLYBENCH_FREE_ARRAY(tmp);

  return 0;
}
