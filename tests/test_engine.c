/* test_engine.c - the CPU reference engine: structure, canonical order, restart equivalence,
 * thread-count independence, capacity overflow. */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "src/deck.h"
#include "src/engine.h"
#include "validation/valid.h"
#include "tests/test_util.h"

static const char *k_deck2 =
    "dim = 2\nroot = 3 2\ntile_size = 8\nmax_level = 5\nthreshold = 0.05\nvariant = cpu\n"
    "model.objects = a g\nmodel.a.type = sphere\nmodel.a.center = 0.4 0.3\nmodel.a.radius = 0.2\n"
    "model.g.type = gaussian\nmodel.g.center = 0.2 0.5\nmodel.g.radius = 0.1\nmodel.g.inside = 3\n";
static const char *k_deck3 =
    "dim = 3\nroot = 2 1 2\ntile_size = 4\nmax_level = 3\nthreshold = 0.1\nfill = model\nvariant = cpu\n"
    "model.objects = b\nmodel.b.type = box\nmodel.b.center = 0.3 0.2 0.4\nmodel.b.radius = 0.11 0.07 0.2\n";

static int refine(const char *text, const char *extra, mesh_t *m, int stop_level)
{
    char buf[4096], err[1024];
    snprintf(buf, sizeof buf, "%s%s", text, extra);
    deck_t d;
    if (deck_parse_text(&d, "test", buf, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    d.quiet = 1;
    if (engine_make_level0(&d, m, err, sizeof err) != 0) return -1;
    refine_report_t r;
    if (stop_level >= 0) {
        const int keep = d.p.max_level;
        d.p.max_level = stop_level;
        if (engine_refine(DP_VARIANT_CPU, &d, m, &r, err, sizeof err) != 0) return -1;
        d.p.max_level = keep;
    }
    const int rc = engine_refine(DP_VARIANT_CPU, &d, m, &r, err, sizeof err);
    if (rc != 0) fprintf(stderr, "engine: %s\n", err);
    deck_free(&d);
    return rc;
}

static void test_deck_text(const char *text, int max_level)
{
    mesh_t a, b;
    char why[512];
    CHECK(refine(text, "", &a, -1) == 0, "refine");
    CHECK(a.nlevels == max_level + 1, "reaches max_level: %d levels", a.nlevels);
    for (dp_tidx t = 1; t < a.ntiles; ++t)
        CHECK(a.level[t] > a.level[t - 1] || (a.level[t] == a.level[t - 1] && a.key[t] > a.key[t - 1]),
              "canonical order at %lld", (long long)t);
    deck_t d;
    char err[512];
    deck_parse_text(&d, "test", text, err, sizeof err);
    valid_report_t v;
    valid_check(&a, &d.p, &v);
    CHECK(v.passed, "validation: %s", v.first_failure);

    /* an engine that lost its whole last level: caught when the output claims max_level */
    {
        mesh_t t;
        CHECK(mesh_copy(&t, &a) == 0, "copy");
        mesh_index_levels(&t);
        const int L = t.nlevels - 1;
        for (dp_tidx i = t.level_start[L - 1]; i < t.level_start[L]; ++i) t.childmask[i] = 0;
        t.ntiles = t.level_start[L];
        mesh_index_levels(&t);
        valid_report_t vt;
        valid_check_mode(&t, &d.p, 1, &vt);
        CHECK(!vt.passed && strstr(vt.first_failure, "refinement incomplete"), "lost last level not caught: %s",
              vt.first_failure);
        valid_check_mode(&t, &d.p, 0, &vt); /* as an input mesh it is a valid hierarchy */
        CHECK(vt.passed, "truncated mesh as input: %s", vt.first_failure);
        mesh_free(&t);
    }
    deck_free(&d);

    /* restart: refine to level 2, then continue: the same mesh */
    CHECK(refine(text, "", &b, 2) == 0, "restart refine");
    CHECK(mesh_equal(&a, &b, why, sizeof why), "restart differs: %s", why);
    mesh_free(&b);
#ifdef _OPENMP
    const int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK(refine(text, "", &b, -1) == 0, "one thread");
    CHECK(mesh_equal(&a, &b, why, sizeof why), "one thread differs: %s", why);
    omp_set_num_threads(nt);
    mesh_free(&b);
#endif
    /* a capacity below the need is an error, not a truncated mesh */
    char cap[64];
    snprintf(cap, sizeof cap, "max_tiles = %lld\n", (long long)a.ntiles - 1);
    CHECK(refine(text, cap, &b, -1) != 0, "overflow must fail");
    mesh_free(&b);
    mesh_free(&a);
}

int main(void)
{
    test_deck_text(k_deck2, 5);
    test_deck_text(k_deck3, 3);
    return TEST_DONE();
}
