/*
 * polybench.c -- minimal run-time support for the PolyBench/C-style
 * look-alike benchmarks of the dpn-synth test suite.
 *
 * Written for the dpn-synth project; it is not a copy of the original
 * PolyBench/C utilities.  It provides aligned allocation and a simple
 * wall-clock timer.
 */
#ifndef _POSIX_C_SOURCE
# define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "polybench.h"

#ifndef POLYBENCH_ALIGNMENT
# define POLYBENCH_ALIGNMENT 64
#endif

#ifndef POLYBENCH_CACHE_SIZE_KB
# define POLYBENCH_CACHE_SIZE_KB 8192
#endif

double polybench_program_total_flops = 0;

static double polybench_t_start;
static double polybench_t_end;

static double polybench_now(void)
{
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return 0.0;
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1.0e-9;
}

void polybench_flush_cache(void)
{
  size_t cs = (size_t) POLYBENCH_CACHE_SIZE_KB * 1024 / sizeof(double);
  double *flush = (double *) calloc(cs, sizeof(double));
  double tmp = 0.0;
  size_t i;
  if (flush == NULL)
    return;
  for (i = 0; i < cs; i++)
    tmp += flush[i];
  /* Use the sum so the loop is not removed. */
  if (tmp > 10.0)
    fprintf(stderr, "polybench_flush_cache: unexpected sum\n");
  free(flush);
}

void polybench_prepare_instruments(void)
{
#ifndef POLYBENCH_NO_FLUSH_CACHE
  polybench_flush_cache();
#endif
}

void polybench_timer_start(void)
{
  polybench_prepare_instruments();
  polybench_t_start = polybench_now();
}

void polybench_timer_stop(void)
{
  polybench_t_end = polybench_now();
}

void polybench_timer_print(void)
{
  printf("%0.6f\n", polybench_t_end - polybench_t_start);
}

void *polybench_alloc_data(unsigned long long n, int elt_size)
{
  size_t bytes = (size_t) n * (size_t) elt_size;
  void *ret = NULL;
  if (bytes == 0)
    bytes = 1;
  if (posix_memalign(&ret, POLYBENCH_ALIGNMENT, bytes) != 0 || ret == NULL) {
    fprintf(stderr, "[PolyBench] posix_memalign: cannot allocate memory\n");
    exit(1);
  }
  memset(ret, 0, bytes);
  return ret;
}

void polybench_free_data(void *ptr)
{
  free(ptr);
}
