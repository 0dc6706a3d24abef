/* test_build.h - what the unit tests that refine share (test_engine, test_balance): a deck from text
 * plus extra keys, and a first build with the cpu engine. Included after src/deck.h and src/engine.h. */
#ifndef DPAMR_TEST_BUILD_H
#define DPAMR_TEST_BUILD_H
#include <stdio.h>

/* The deck text plus extra, parsed (quiet). 0 or -1. */
static int parse(const char *text, const char *extra, deck_t *d)
{
    char buf[4096], err[1024];
    snprintf(buf, sizeof buf, "%s%s", text, extra);
    if (deck_parse_text(d, "test", buf, err, sizeof err) != 0) return fprintf(stderr, "%s\n", err), -1;
    d->quiet = 1;
    return 0;
}

/* A first build (level 0 from the model at time 0, refined on the cpu variant) of deck d. */
static int build(const deck_t *d, mesh_t *m)
{
    char err[1024];
    refine_report_t r;
    if (engine_make_level0(d, m, err, sizeof err) != 0 || engine_refine(DP_VARIANT_CPU, d, m, &r, err, sizeof err) != 0)
        return fprintf(stderr, "build: %s\n", err), -1;
    return 0;
}
#endif
