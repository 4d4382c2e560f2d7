/*
 * jacobi-2d.c: look-alike of the PolyBench/C jacobi-2d benchmark, written
 * for the dpn-synth test suite (same conventions, not a copy).
 *   5-point Jacobi stencil, TSTEPS time steps, ping-pong between A and B
 */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* Common harness macros. */
#include <polybench.h>

/* Sizes and data type of this benchmark. */
#include "jacobi-2d.h"


/* Deterministic input data. */
static
void init_array(int n,
                DATA_TYPE POLYBENCH_2D(A,N,N,n,n),
                DATA_TYPE POLYBENCH_2D(B,N,N,n,n))
{
  int i, j;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = (DATA_TYPE) ((7 * i + 3 * j + 1) % n) / n;
      B[i][j] = (DATA_TYPE) ((i + 5 * j + 4) % n) / n;
    }
}


/* Dump the live-out array A. */
static
void print_array(int n,
                 DATA_TYPE POLYBENCH_2D(A,N,N,n,n))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0)
        fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
    }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the whole function is timed. */
static
void kernel_jacobi_2d(int tsteps,
                      int n,
                      DATA_TYPE POLYBENCH_2D(A,N,N,n,n),
                      DATA_TYPE POLYBENCH_2D(B,N,N,n,n))
{
  int t, i, j;

#pragma scop
  for (t = 0; t < _PB_TSTEPS; t++) {
    for (i = 1; i < _PB_N - 1; i++)
      for (j = 1; j < _PB_N - 1; j++)
        B[i][j] = SCALAR_VAL(0.2) * (A[i][j] + A[i][j - 1] + A[i][j + 1]
                                     + A[i + 1][j] + A[i - 1][j]);
    for (i = 1; i < _PB_N - 1; i++)
      for (j = 1; j < _PB_N - 1; j++)
        A[i][j] = SCALAR_VAL(0.2) * (B[i][j] + B[i][j - 1] + B[i][j + 1]
                                     + B[i + 1][j] + B[i - 1][j]);
  }
#pragma endscop
}


int main(int argc, char** argv)
{
  /* Problem size. */
  int n = N;
  int tsteps = TSTEPS;

  /* Variable declaration and allocation. */
  POLYBENCH_2D_ARRAY_DECL(A,DATA_TYPE,N,N,n,n);
  POLYBENCH_2D_ARRAY_DECL(B,DATA_TYPE,N,N,n,n);

  /* Initialize the arrays. */
  init_array(n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

  /* Start timer. */
  polybench_start_instruments;

  /* Run the kernel. */
  kernel_jacobi_2d(tsteps, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

  /* Stop and print timer. */
  polybench_stop_instruments;
  polybench_print_instruments;

  /* Keep the result live; dump it with -DPOLYBENCH_DUMP_ARRAYS. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(A)));

  /* Free the arrays. */
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);

  return 0;
}
