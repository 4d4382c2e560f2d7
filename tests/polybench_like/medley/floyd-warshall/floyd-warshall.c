/*
 * floyd-warshall.c: look-alike of the PolyBench/C floyd-warshall
 * benchmark, written for the dpn-synth test suite (same conventions, not
 * a copy).  All-pairs shortest paths; the data type defaults to int.
 */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* Common harness macros. */
#include <polybench.h>

/* Sizes and data type of this benchmark. */
#include "floyd-warshall.h"


/* Deterministic input data: small positive edge weights, a large value
   (999) for missing edges, 0 on the diagonal. */
static
void init_array(int n,
                DATA_TYPE POLYBENCH_2D(path,N,N,n,n))
{
  int i, j;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if (i == j)
        path[i][j] = 0;
      else if ((5 * i + 3 * j) % 4 == 0)
        path[i][j] = 999;
      else
        path[i][j] = (DATA_TYPE) ((i + 2 * j) % 9 + 1);
    }
}


/* Dump the live-out array path. */
static
void print_array(int n,
                 DATA_TYPE POLYBENCH_2D(path,N,N,n,n))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("path");
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0)
        fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, path[i][j]);
    }
  POLYBENCH_DUMP_END("path");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the whole function is timed. */
static
void kernel_floyd_warshall(int n,
                           DATA_TYPE POLYBENCH_2D(path,N,N,n,n))
{
  int i, j, k;

#pragma scop
  for (k = 0; k < _PB_N; k++)
    for (i = 0; i < _PB_N; i++)
      for (j = 0; j < _PB_N; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ?
                     path[i][j] : path[i][k] + path[k][j];
#pragma endscop
}


int main(int argc, char** argv)
{
  /* Problem size. */
  int n = N;

  /* Variable declaration and allocation. */
  POLYBENCH_2D_ARRAY_DECL(path,DATA_TYPE,N,N,n,n);

  /* Initialize the array. */
  init_array(n, POLYBENCH_ARRAY(path));

  /* Start timer. */
  polybench_start_instruments;

  /* Run the kernel. */
  kernel_floyd_warshall(n, POLYBENCH_ARRAY(path));

  /* Stop and print timer. */
  polybench_stop_instruments;
  polybench_print_instruments;

  /* Keep the result live; dump it with -DPOLYBENCH_DUMP_ARRAYS. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(path)));

  /* Free the array. */
  POLYBENCH_FREE_ARRAY(path);

  return 0;
}
