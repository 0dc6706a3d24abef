/* test_engine.c - the CPU reference engine: structure, canonical order, restart equivalence,
 * thread-count independence, capacity overflow. */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "src/deck.h"
#include "device/gpu.h"
#include "src/engine.h"
#include "validation/valid.h"
#include "tests/test_util.h"
#include "tests/test_build.h"

static const char *k_deck2 =
    "dim = 2\nroot = 3 2\ntile_size = 8\nmax_level = 5\nthreshold = 0.05\nvariant = cpu\n"
    "model.objects = a g\nmodel.a.type = sphere\nmodel.a.center = 0.4 0.3\nmodel.a.radius = 0.2\n"
    "model.g.type = gaussian\nmodel.g.center = 0.2 0.5\nmodel.g.radius = 0.1\nmodel.g.inside = 3\n";
#define DECK3_BOX "model.objects = b\nmodel.b.type = box\nmodel.b.center = 0.3 0.2 0.4\nmodel.b.radius = 0.11 0.07 0.2\n"
static const char *k_deck3 =
    "dim = 3\nroot = 2 1 2\ntile_size = 4\nmax_level = 3\nthreshold = 0.1\nfill = model\nvariant = cpu\n" DECK3_BOX;
/* the same box with fill = prolong (the default), a lower threshold: prolonged data keeps refining */
static const char *k_deck3p = "dim = 3\nroot = 2 1 2\ntile_size = 4\nmax_level = 3\nthreshold = 0.02\nvariant = cpu\n" DECK3_BOX;

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

/* Regrids of time steps (src/regrid_cpu.c). fill = model: a regrid to time t is the first build of
 * the objects moved to t, bit for bit, and a regrid to the same time changes nothing. fill = prolong:
 * every regrid validates as a complete refinement, conserves the composite total, counts its tiles
 * consistently and does not depend on the thread count. A capacity below the need is an error; a GPU
 * variant is one clear error without a device, and the cpu's regrid to the bit with one. */
static void test_regrid(const char *text, const char *moving, int model)
{
    char err[1024], why[512];
    deck_t d;
    if (parse(text, moving, &d) != 0) {
        CHECK(0, "moving deck does not parse");
        return;
    }
    mesh_t m, ref;
    CHECK(build(&d, &m) == 0, "first build");
    regrid_report_t r;
    if (model) {
        mesh_copy(&ref, &m);
        CHECK(engine_regrid(DP_VARIANT_CPU, &d, &m, 0.0, &r, err, sizeof err) == 0, "%s", err);
        CHECK(r.added == 0 && r.removed == 0 && r.changed_fraction == 0.0 && mesh_equal(&m, &ref, why, sizeof why),
              "a regrid to time 0 changes nothing: +%lld -%lld %s", r.added, r.removed, why);
        mesh_free(&ref);
    }
    double t = 0.0;
    long long changed = 0;
    for (int k = 1; k <= 6; ++k) {
        t = k * 0.05;
        const long long before = m.ntiles;
        CHECK(engine_regrid(DP_VARIANT_CPU, &d, &m, t, &r, err, sizeof err) == 0, "regrid %d: %s", k, err);
        changed += r.added + r.removed;
        CHECK(r.tiles_before == before && r.kept + r.removed == before && r.kept + r.added == m.ntiles &&
                  r.tiles_after == m.ntiles && r.nlevels == m.nlevels,
              "regrid %d counts: %lld kept, +%lld, -%lld, %lld -> %lld", k, r.kept, r.added, r.removed, before,
              (long long)m.ntiles);
        dp_params pt;
        dp_params_at(&d.p, t, &pt);
        valid_report_t v;
        valid_check_mode(&m, &pt, 1, &v);
        CHECK(v.passed, "regrid %d validates: %s", k, v.first_failure);
        CHECK(r.conservation_checked == !model && (model || r.conservation_rel < 1e-9),
              "regrid %d conserves the total: %.3g", k, r.conservation_rel);
    }
    CHECK(changed > 0, "the moving objects change the hierarchy");
    if (model) { /* the first build of the objects moved to t, sampled at t */
        deck_t dt = d;
        dp_params_at(&d.p, t, &dt.p);
        CHECK(build(&dt, &ref) == 0, "build at t");
        CHECK(mesh_equal(&m, &ref, why, sizeof why), "regrid to t = build at t: %s", why);
        mesh_free(&ref);
    }
#ifdef _OPENMP
    { /* the same steps on one thread */
        const int nt = omp_get_max_threads();
        omp_set_num_threads(1);
        mesh_t one;
        CHECK(build(&d, &one) == 0, "one thread build");
        for (int k = 1; k <= 6; ++k) engine_regrid(DP_VARIANT_CPU, &d, &one, k * 0.05, &r, err, sizeof err);
        CHECK(mesh_equal(&m, &one, why, sizeof why), "one thread differs: %s", why);
        mesh_free(&one);
        omp_set_num_threads(nt);
    }
#endif
    /* a capacity below the need, a GPU variant: errors */
    deck_t small = d;
    small.max_tiles = m.level_start[1] + 1;
    CHECK(engine_regrid(DP_VARIANT_CPU, &small, &m, 0.4, &r, err, sizeof err) != 0 &&
              strstr(err, "tile store overflow regridding level 1"),
          "regrid overflow: %s", err);
    if (!gpu_available(why, sizeof why)) { /* without a device: one clear message, the mesh untouched */
        mesh_t keep;
        mesh_copy(&keep, &m);
        CHECK(engine_regrid(DP_VARIANT_CDP, &d, &m, 0.4, &r, err, sizeof err) != 0 &&
                  strstr(err, "variant=cdp needs a CUDA device"),
              "GPU regrid without a device: %s", err);
        CHECK(mesh_equal(&m, &keep, why, sizeof why), "a refused GPU regrid leaves the mesh: %s", why);
        mesh_free(&keep);
    } else { /* with one: every GPU variant's regrids, pdl off and on, equal the cpu's bit for bit */
        const int vs[2] = { DP_VARIANT_HOSTLAUNCH, DP_VARIANT_CDP };
        for (int vi = 0; vi < 2; ++vi)
            for (int pdl = 0; pdl < 2; ++pdl) {
                mesh_t c, gm;
                deck_t dg = d;
                dg.pdl = pdl;
                mesh_copy(&c, &m);
                mesh_copy(&gm, &m);
                for (int k = 7; k <= 9; ++k) {
                    regrid_report_t rc, rg;
                    CHECK(engine_regrid(DP_VARIANT_CPU, &d, &c, k * 0.05, &rc, err, sizeof err) == 0, "%s", err);
                    CHECK(engine_regrid(vs[vi], &dg, &gm, k * 0.05, &rg, err, sizeof err) == 0, "%s", err);
                    CHECK(mesh_equal(&c, &gm, why, sizeof why) && rc.kept == rg.kept && rc.added == rg.added &&
                              rc.removed == rg.removed && rc.conservation_rel == rg.conservation_rel &&
                              (!rc.conservation_checked ||
                               (rc.total_before[0] == rg.total_before[0] && rc.total_after[0] == rg.total_after[0])),
                          "%s pdl=%d regrid to %g equals cpu's: %s", deck_variant_name(vs[vi]), pdl, k * 0.05, why);
                }
                mesh_free(&c);
                mesh_free(&gm);
            }
    }
    mesh_free(&m);
    deck_free(&d);
}

int main(void)
{
    test_deck_text(k_deck2, 5);
    test_deck_text(k_deck3, 3);
    test_regrid(k_deck2, "model.a.velocity = 0.6 0.3\nmodel.g.velocity = -0.2 0.4\n", 0);
    test_regrid(k_deck2, "fill = model\nmodel.a.velocity = 0.6 0.3\nmodel.g.velocity = -0.2 0.4\n", 1);
    test_regrid(k_deck3, "model.b.velocity = 0.5 0.5 -0.3\n", 1);
    test_regrid(k_deck3p, "model.b.velocity = 0.5 0.5 -0.3\n", 0);
    return TEST_DONE();
}
