/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 caller built against older and newer copies of the option structs than the library's: the
   library must write only the bytes the caller has, read defaults for the fields the caller lacks, accept
   a newer caller's zero tail and refuse a set one. Exit status 0 = all checks hold. */
#include <sfft/sfft.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* sfft_sparse_options as sfft 0.1 declared it, before the comb fields (48 bytes on LP64). */
typedef struct old_sparse_options {
  size_t struct_size;
  sfft_sparse_variant variant;
  double filter_tolerance;
  double bucket_factor;
  int location_loops;
  int estimation_loops;
  int bits_per_stage;
  int min_votes;
} old_sparse_options;

/* The old struct followed by bytes the caller owns for something else. */
typedef struct guarded_old_sparse {
  old_sparse_options knobs;
  unsigned char after[64];
} guarded_old_sparse;

/* A struct from a newer header: today's fields plus one the library does not know. */
typedef struct newer_sparse_options {
  sfft_sparse_options known;
  uint64_t future_field;
} newer_sparse_options;

typedef struct newer_options {
  sfft_options known;
  uint64_t future_field;
} newer_options;

static int untouched(const unsigned char *p, size_t n, unsigned char value) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (p[i] != value) return 0;
  return 1;
}

/* A 2-sparse spectrum: X[3] = 4, X[77] = 2i, n = 1024. */
static void two_tones(double *x, int n) {
  int t;
  for (t = 0; t < n; ++t) {
    double a = 6.283185307179586 * 3 * t / n, b = 6.283185307179586 * 77 * t / n;
    /* x[t] = (1/n) sum X[f] e^{+2 pi i f t / n} for FFTW_FORWARD coefficients X */
    x[2 * t] = (4 * cos(a) - 2 * sin(b)) / n;
    x[2 * t + 1] = (4 * sin(a) + 2 * cos(b)) / n;
  }
}

static void sparse_checks(void) {
  static double x[2 * 1024];
  uint64_t freqs[2];
  double values[4];
  uint64_t found = 0;
  sfft_options opts;
  sfft_plan plan = NULL;
  guarded_old_sparse old;
  newer_sparse_options newer;

  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  two_tones(x, 1024);

  /* Both inits of the old struct: the sized one (what the old header's macro would pass) and the unsized
     symbol an old binary calls. Neither may touch `after`. */
  memset(&old, 0xA5, sizeof old);
  sfft_sparse_options_init_sized((sfft_sparse_options *)&old.knobs, sizeof old.knobs);
  CHECK(old.knobs.struct_size == sizeof old.knobs);
  CHECK(old.knobs.location_loops == 0 && old.knobs.min_votes == 0);
  CHECK(untouched(old.after, sizeof old.after, 0xA5));
  memset(&old, 0xA5, sizeof old);
  (sfft_sparse_options_init)((sfft_sparse_options *)&old.knobs);
  CHECK(old.knobs.struct_size == sizeof old.knobs);
  CHECK(untouched(old.after, sizeof old.after, 0xA5));

  /* Read back: the 0xA5 bytes after the old struct sit where today's comb fields are; the library must not
     read them (comb_loops would be nonzero garbage and refused for EXACT). */
  old.knobs.variant = SFFT_SPARSE_EXACT;
  CHECK(sfft_create_ex(&plan, 1024, 2, SFFT_COMPLEX128, &opts, (const sfft_sparse_options *)&old.knobs) ==
        SFFT_SUCCESS);
  if (plan != NULL) {
    found = 2;
    CHECK(sfft_exec(plan, x, freqs, values, &found) == SFFT_SUCCESS);
    CHECK(found == 2 && freqs[0] == 3 && freqs[1] == 77);
    sfft_destroy(plan);
    plan = NULL;
  }

  /* A newer caller: a zero tail is fine, a set one is refused and named. */
  memset(&newer, 0xA5, sizeof newer);
  sfft_sparse_options_init_sized(&newer.known, sizeof newer);
  CHECK(newer.known.struct_size == sizeof newer);
  CHECK(newer.future_field == 0);
  CHECK(sfft_create_ex(&plan, 1024, 2, SFFT_COMPLEX128, &opts, &newer.known) == SFFT_SUCCESS);
  sfft_destroy(plan);
  plan = NULL;
  newer.future_field = 1;
  CHECK(sfft_create_ex(&plan, 1024, 2, SFFT_COMPLEX128, &opts, &newer.known) == SFFT_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(sfft_last_error(), "newer sfft.h") != NULL);
  CHECK(plan == NULL);
}

static void options_checks(void) {
  float in[6] = {0, 1, 2, 3, 4, 5}, out[6];
  int64_t shape[1] = {6};
  newer_options newer;
  unsigned char tiny[16];

  memset(&newer, 0xA5, sizeof newer);
  sfft_options_init_sized(&newer.known, sizeof newer);
  CHECK(newer.future_field == 0 && newer.known.backend == SFFT_BACKEND_AUTO);
  newer.known.backend = SFFT_BACKEND_CPU;
  CHECK(fftshift_nd(out, in, 1, shape, 0u, SFFT_FLOAT32, &newer.known) == SFFT_SUCCESS);
  CHECK(out[0] == 3 && out[3] == 0);
  newer.future_field = 7;
  CHECK(fftshift_nd(out, in, 1, shape, 0u, SFFT_FLOAT32, &newer.known) == SFFT_ERROR_INVALID_ARGUMENT);

  /* A size too small to hold even struct_size: nothing is written. */
  memset(tiny, 0x5A, sizeof tiny);
  sfft_options_init_sized((sfft_options *)tiny, 4);
  CHECK(untouched(tiny, sizeof tiny, 0x5A));
}

static void nufft3_checks(void) {
  struct {
    nufft3_options known;
    unsigned char after[32];
  } guarded;
  nufft3_plan plan = NULL;
  sfft_options opts;

  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  memset(&guarded, 0xA5, sizeof guarded);
  /* An older caller whose struct ended after ntransf. */
  nufft3_options_init_sized(&guarded.known, offsetof(nufft3_options, kernel));
  CHECK(guarded.known.ntransf == 1);
  CHECK(untouched((const unsigned char *)&guarded.known + offsetof(nufft3_options, kernel),
                  sizeof guarded - offsetof(nufft3_options, kernel), 0xA5));
  guarded.known.ntransf = 3;
  CHECK(nufft3_create(&plan, 1, SFFT_COMPLEX128, -1, 1e-6, &opts) == SFFT_SUCCESS);
  /* kernel and upsampfac hold 0xA5 garbage beyond struct_size: only ntransf may be read. */
  CHECK(nufft3_set_options(plan, &guarded.known) == SFFT_SUCCESS);
  nufft3_destroy(plan);
}

int main(void) {
  sparse_checks();
  options_checks();
  nufft3_checks();
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed; last error: %s\n", failures, sfft_last_error());
    return 1;
  }
  printf("option structs across versions OK\n");
  return 0;
}
