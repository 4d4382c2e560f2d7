/*
 * cholesky.c: look-alike of the PolyBench/C cholesky benchmark, written
 * for the dpn-synth test suite (same conventions, not a copy).
 *   in-place Cholesky factorisation A = L * L^T (lower triangle)
 */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* Common harness macros. */
#include <polybench.h>

/* Sizes and data type of this benchmark. */
#include "cholesky.h"


/* Deterministic input data: a symmetric, strictly diagonally dominant
   matrix with a positive diagonal, hence positive definite. */
static
void init_array(int n,
                DATA_TYPE POLYBENCH_2D(A,N,N,n,n))
{
  int i, j;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if (i == j)
        A[i][j] = (DATA_TYPE) n + SCALAR_VAL(1.0);
      else
        A[i][j] = SCALAR_VAL(1.0) / (DATA_TYPE) (i + j + 2);
    }
}


/* Dump the lower triangle of A (the factor L). */
static
void print_array(int n,
                 DATA_TYPE POLYBENCH_2D(A,N,N,n,n))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < n; i++)
    for (j = 0; j <= i; j++) {
      if ((i * n + j) % 20 == 0)
        fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
    }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the whole function is timed. */
static
void kernel_cholesky(int n,
                     DATA_TYPE POLYBENCH_2D(A,N,N,n,n))
{
  int i, j, k;

#pragma scop
  for (i = 0; i < _PB_N; i++) {
    /* strictly lower part of row i */
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    /* diagonal element */
    for (k = 0; k < i; k++)
      A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = SQRT_FUN(A[i][i]);
  }
#pragma endscop
}


int main(int argc, char** argv)
{
  /* Problem size. */
  int n = N;

  /* Variable declaration and allocation. */
  POLYBENCH_2D_ARRAY_DECL(A,DATA_TYPE,N,N,n,n);

  /* Initialize the array. */
  init_array(n, POLYBENCH_ARRAY(A));

  /* Start timer. */
  polybench_start_instruments;

  /* Run the kernel. */
  kernel_cholesky(n, POLYBENCH_ARRAY(A));

  /* Stop and print timer. */
  polybench_stop_instruments;
  polybench_print_instruments;

  /* Keep the result live; dump it with -DPOLYBENCH_DUMP_ARRAYS. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(A)));

  /* Free the array. */
  POLYBENCH_FREE_ARRAY(A);

  return 0;
}
