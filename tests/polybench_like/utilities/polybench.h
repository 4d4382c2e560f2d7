/*
 * polybench.h -- minimal PolyBench/C-style harness header.
 *
 * Written for the dpn-synth project as a look-alike of the conventions
 * used by PolyBench/C 4.2.1 benchmark files (macro names and their
 * meaning).  It is not a copy of the original header; it only provides
 * what the look-alike benchmarks in this directory use.
 */
#ifndef POLYBENCH_H
# define POLYBENCH_H

# include <stdlib.h>
# include <stdio.h>

/* Extra elements appended to every array dimension (0 by default). */
# ifndef POLYBENCH_PADDING_FACTOR
#  define POLYBENCH_PADDING_FACTOR 0
# endif

/* Loop bounds: the compile-time constant (default) or the scalar
   parameter of the kernel (with -DPOLYBENCH_USE_SCALAR_LB). */
# ifdef POLYBENCH_USE_SCALAR_LB
#  define POLYBENCH_LOOP_BOUND(x, y) y
# else
#  define POLYBENCH_LOOP_BOUND(x, y) x
# endif

/* Array dimensions in kernel prototypes: the constant by default, or
   the scalar parameter (C99 VLA) with -DPOLYBENCH_USE_C99_PROTO. */
# ifdef POLYBENCH_USE_C99_PROTO
#  define POLYBENCH_C99_SELECT(x, y) y
# else
#  define POLYBENCH_C99_SELECT(x, y) x
# endif

# ifdef POLYBENCH_USE_RESTRICT
#  define POLYBENCH_RESTRICT restrict
# else
#  define POLYBENCH_RESTRICT
# endif

/* Array parameter / variable declarators. */
# define POLYBENCH_1D(var, dim1, ddim1) \
  var[POLYBENCH_RESTRICT POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR]
# define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2) \
  var[POLYBENCH_RESTRICT POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR] \
     [POLYBENCH_C99_SELECT(dim2, ddim2) + POLYBENCH_PADDING_FACTOR]
# define POLYBENCH_3D(var, dim1, dim2, dim3, ddim1, ddim2, ddim3) \
  var[POLYBENCH_RESTRICT POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR] \
     [POLYBENCH_C99_SELECT(dim2, ddim2) + POLYBENCH_PADDING_FACTOR] \
     [POLYBENCH_C99_SELECT(dim3, ddim3) + POLYBENCH_PADDING_FACTOR]

/* Heap-allocated arrays: NAME is declared as a pointer to the whole
   array, POLYBENCH_ARRAY(NAME) gives the array itself. */
# define POLYBENCH_ALLOC_1D_ARRAY(n1, type) \
  (type (*)[(n1) + POLYBENCH_PADDING_FACTOR]) \
  polybench_alloc_data((n1) + POLYBENCH_PADDING_FACTOR, (int) sizeof(type))
# define POLYBENCH_ALLOC_2D_ARRAY(n1, n2, type) \
  (type (*)[(n1) + POLYBENCH_PADDING_FACTOR][(n2) + POLYBENCH_PADDING_FACTOR]) \
  polybench_alloc_data(((n1) + POLYBENCH_PADDING_FACTOR) \
                       * ((n2) + POLYBENCH_PADDING_FACTOR), (int) sizeof(type))
# define POLYBENCH_ALLOC_3D_ARRAY(n1, n2, n3, type) \
  (type (*)[(n1) + POLYBENCH_PADDING_FACTOR][(n2) + POLYBENCH_PADDING_FACTOR] \
           [(n3) + POLYBENCH_PADDING_FACTOR]) \
  polybench_alloc_data(((n1) + POLYBENCH_PADDING_FACTOR) \
                       * ((n2) + POLYBENCH_PADDING_FACTOR) \
                       * ((n3) + POLYBENCH_PADDING_FACTOR), (int) sizeof(type))

# define POLYBENCH_1D_ARRAY_DECL(var, type, dim1, ddim1) \
  type (*var)[POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR]; \
  var = POLYBENCH_ALLOC_1D_ARRAY(POLYBENCH_C99_SELECT(dim1, ddim1), type)
# define POLYBENCH_2D_ARRAY_DECL(var, type, dim1, dim2, ddim1, ddim2) \
  type (*var)[POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR] \
             [POLYBENCH_C99_SELECT(dim2, ddim2) + POLYBENCH_PADDING_FACTOR]; \
  var = POLYBENCH_ALLOC_2D_ARRAY(POLYBENCH_C99_SELECT(dim1, ddim1), \
                                 POLYBENCH_C99_SELECT(dim2, ddim2), type)
# define POLYBENCH_3D_ARRAY_DECL(var, type, dim1, dim2, dim3, ddim1, ddim2, ddim3) \
  type (*var)[POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR] \
             [POLYBENCH_C99_SELECT(dim2, ddim2) + POLYBENCH_PADDING_FACTOR] \
             [POLYBENCH_C99_SELECT(dim3, ddim3) + POLYBENCH_PADDING_FACTOR]; \
  var = POLYBENCH_ALLOC_3D_ARRAY(POLYBENCH_C99_SELECT(dim1, ddim1), \
                                 POLYBENCH_C99_SELECT(dim2, ddim2), \
                                 POLYBENCH_C99_SELECT(dim3, ddim3), type)

# define POLYBENCH_ARRAY(x) (*x)
# define POLYBENCH_FREE_ARRAY(x) free((void *) (x))

/* Array dumps (to stderr by default). */
# ifndef POLYBENCH_DUMP_TARGET
#  define POLYBENCH_DUMP_TARGET stderr
# endif
# define POLYBENCH_DUMP_START \
  fprintf(POLYBENCH_DUMP_TARGET, "==BEGIN DUMP_ARRAYS==\n")
# define POLYBENCH_DUMP_FINISH \
  fprintf(POLYBENCH_DUMP_TARGET, "==END   DUMP_ARRAYS==\n")
# define POLYBENCH_DUMP_BEGIN(s) \
  fprintf(POLYBENCH_DUMP_TARGET, "begin dump: %s", s)
# define POLYBENCH_DUMP_END(s) \
  fprintf(POLYBENCH_DUMP_TARGET, "\nend   dump: %s\n", s)

/* Keep the kernel's results live.  Without -DPOLYBENCH_DUMP_ARRAYS the
   call sits behind a condition the compiler cannot prove false, so the
   dump code is never run but the kernel is not optimised away.
   Expects argc and argv to be in scope (as in main). */
# ifdef POLYBENCH_DUMP_ARRAYS
#  define POLYBENCH_DCE_ONLY_CODE
# else
#  define POLYBENCH_DCE_ONLY_CODE if (argc > 42 && ! strcmp(argv[0], ""))
# endif
# define polybench_prevent_dce(func) \
  POLYBENCH_DCE_ONLY_CODE            \
  func

/* Instrumentation: timing only when -DPOLYBENCH_TIME is given. */
# ifdef POLYBENCH_TIME
#  define polybench_start_instruments polybench_timer_start();
#  define polybench_stop_instruments polybench_timer_stop();
#  define polybench_print_instruments polybench_timer_print();
# else
#  define polybench_start_instruments
#  define polybench_stop_instruments
#  define polybench_print_instruments
# endif

extern double polybench_program_total_flops;

extern void polybench_flush_cache(void);
extern void polybench_prepare_instruments(void);
extern void polybench_timer_start(void);
extern void polybench_timer_stop(void);
extern void polybench_timer_print(void);
extern void *polybench_alloc_data(unsigned long long n, int elt_size);
extern void polybench_free_data(void *ptr);

#endif /* !POLYBENCH_H */
