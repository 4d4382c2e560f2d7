/* A header with a syntax error on line 3. */
#define SCALE 2.0
typedef double real_t real_t2;
