/* test_balance.c - 2:1 balance (src/balance.c): the cpu engine's balanced build and regrids against a
 * brute-force reading of the definition, in 2D and 3D, both fills; the tiles are a superset of the
 * unbalanced build's, every added tile is needed, validation passes them and fails an unbalanced
 * mesh declared balanced, naming the incomplete octant. The GPU engines' balance
 * (device/balance_gpu.cu), run on the host step by step with the same functions, gives the mesh
 * balance_close gives. */
#include <stdlib.h>
#include <string.h>

#include "src/balance.h"
#include "src/balance_tile.h"
#include "src/deck.h"
#include "src/engine.h"
#include "src/tile.h"
#include "validation/valid.h"
#include "tests/test_util.h"
#include "tests/test_build.h"

/* a thin, deep feature: the criterion refines a strip to max_level, so its neighbours are many
 * levels coarser without balance */
static const char *k_deck2 =
    "dim = 2\nroot = 3 2\ntile_size = 4\nmax_level = 7\nthreshold = 0.05\nvariant = cpu\n"
    "model.objects = a g\nmodel.a.type = box\nmodel.a.center = 0.41 0.3\nmodel.a.radius = 0.003 0.2\n"
    "model.g.type = gaussian\nmodel.g.center = 0.2 0.5\nmodel.g.radius = 0.03\nmodel.g.inside = 3\n";
static const char *k_deck3 =
    "dim = 3\nroot = 2 1 2\ntile_size = 4\nmax_level = 5\nthreshold = 0.1\nvariant = cpu\n"
    "model.objects = b\nmodel.b.type = sphere\nmodel.b.center = 0.31 0.2 0.43\nmodel.b.radius = 0.05\n";

/* inputs/default.inp: a disc and a hill, the gradient criterion, eight levels */
static const char *k_default =
    "dim = 2\nroot = 4 4\ntile_size = 8\nmax_level = 8\ncriterion = gradient\nthreshold = 3.0\nvariant = cpu\n"
    "model.objects = disc hill\nmodel.disc.type = sphere\nmodel.disc.center = 0.4 0.45\nmodel.disc.radius = 0.22\n"
    "model.disc.inside = 1.0\nmodel.disc.outside = 0.1\nmodel.hill.type = gaussian\nmodel.hill.center = 0.72 0.7\n"
    "model.hill.radius = 0.08 0.14\nmodel.hill.inside = 0.8\nmodel.hill.outside = 0.0\n";

/* The index of tile (L, c) by a linear search, or -1. */
static dp_tidx find(const mesh_t *m, int L, const int32_t *c)
{
    for (dp_tidx t = m->level_start[L]; t < m->level_start[L + 1]; ++t)
        if (m->coord[3 * t] == c[0] && m->coord[3 * t + 1] == c[1] && m->coord[3 * t + 2] == c[2]) return t;
    return -1;
}

/* The definition, read literally: every tile of level L >= 2 has (L - 1, (c + d) >> 1) for every d
 * with c + d inside the level. Returns the tiles that miss one. */
static long long unbalanced(const mesh_t *m)
{
    long long bad = 0;
    for (int L = 2; L < m->nlevels; ++L)
        for (dp_tidx t = m->level_start[L]; t < m->level_start[L + 1]; ++t) {
            int miss = 0;
            for (int dz = (m->dim == 3 ? -1 : 0); dz <= (m->dim == 3 ? 1 : 0); ++dz)
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        const int d[3] = { dx, dy, dz };
                        int32_t q[3];
                        int inside = 1;
                        for (int a = 0; a < 3; ++a) {
                            const int64_t v = m->coord[3 * t + a] + d[a], ext = (int64_t)m->root[a] << L;
                            if (v < 0 || v >= (a < m->dim ? ext : 1)) inside = 0;
                            q[a] = (int32_t)(v >> 1);
                        }
                        if (inside && find(m, L - 1, q) < 0) miss = 1;
                    }
            if (miss && bad < 3)
                printf("  tile %lld, level %d (%d,%d,%d), misses a tile of level %d\n", (long long)t, L,
                       m->coord[3 * t], m->coord[3 * t + 1], m->coord[3 * t + 2], L - 1);
            bad += miss;
        }
    return bad;
}

static size_t cells_of(const mesh_t *m) { return (size_t)mesh_cells(m); }

static int cmp_key(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The GPU engines' balance of m (device/balance_gpu.cu, dbal_close) on the host, kernel by kernel
 * with the functions the kernels call (src/balance_tile.h): balMissing's candidates per level, finest
 * first, sorted and made unique (CUB's SortKeys and Unique there); the balanced level starts;
 * balFromOld (old: a regrid's store before the step, or NULL); balMergeOld and balMergeNew
 * (dp_bal_old_to, dp_bal_new_to, dp_bal_parent, dp_bal_children); balFill coarsest first (old cells,
 * or tile_fill: the device's block_fill_tiles matches it bit for bit). Into out (allocated here);
 * *from_old: the added tiles old had. 0, or -1 on a missing parent. */
static int device_balance(const dp_params *p, const mesh_t *m, const mesh_t *old, mesh_t *out, long long *from_old)
{
    dp_bal_t B;
    memset(&B, 0, sizeof B);
    uint64_t *ak[DP_MAX_LEVELS] = { NULL };
    const int dim = m->dim, nl = m->nlevels;
    int rc = 0;
    for (int a = 0; a < 3; ++a) B.root[a] = m->root[a];
    for (int L = 0; L <= nl; ++L) B.ls[L] = m->level_start[L];
    B.nl = nl;
    for (int L = nl - 1; L >= 2; --L) { /* balMissing, then SortKeys and Unique */
        const int64_t k = B.ls[L + 1] - B.ls[L], items = k + B.an[L];
        uint64_t *cand = malloc((size_t)(items << dim) * sizeof *cand + 8);
        int64_t nc = 0, u = 0;
        for (int64_t i = 0; i < items; ++i) {
            int32_t c[3], w[8][3];
            if (i < k) memcpy(c, m->coord + 3 * (B.ls[L] + i), sizeof c);
            else dp_morton_decode(dim, B.ak[L][i - k], c);
            const int nw = dp_balance_wanted(dim, B.root, L, c, w);
            for (int j = 0; j < nw; ++j) {
                const uint64_t key = dp_morton(dim, w[j][0], w[j][1], w[j][2]);
                if (dp_key_find(m->key, B.ls[L - 1], B.ls[L], key) < 0) cand[nc++] = key;
            }
        }
        qsort(cand, (size_t)nc, sizeof *cand, cmp_key);
        for (int64_t i = 0; i < nc; ++i)
            if (u == 0 || cand[i] != cand[u - 1]) cand[u++] = cand[i];
        ak[L - 1] = cand;
        B.ak[L - 1] = cand;
        B.an[L - 1] = u;
    }
    int64_t at = 0, base = 0;
    for (int L = 0; L < nl; ++L) {
        B.nls[L] = at;
        B.abase[L] = base;
        base += B.an[L];
        at += B.ls[L + 1] - B.ls[L] + B.an[L];
    }
    B.nls[nl] = at;
    B.onl = old ? old->nlevels : 0;
    for (int L = 0; old && L <= B.onl; ++L) B.ols[L] = old->level_start[L];
    int64_t *oidx = malloc((size_t)(base + 1) * sizeof *oidx);
    *from_old = 0;
    for (int L = 1; L < nl; ++L) /* balFromOld (the cells are read in balFill: here old stays as it is) */
        for (int64_t j = 0; j < B.an[L]; ++j) {
            const int64_t o = L < B.onl ? dp_key_find(old->key, B.ols[L], B.ols[L + 1], B.ak[L][j]) : -1;
            oidx[B.abase[L] + j] = o;
            *from_old += o >= 0;
        }
    *out = *m;
    mesh_alloc(out, at);
    const dp_tiles T = mesh_tiles(out);
    for (int64_t i = 0; i < m->ntiles; ++i) { /* balMergeOld */
        const int L = m->level[i];
        const int64_t t = dp_bal_old_to(&B, m->key, L, i);
        mesh_copy_tiles(out, t, m, i, 1);
        T.parent[t] = L > 0 ? dp_bal_old_to(&B, m->key, L - 1, m->parent[i]) : -1;
        T.childmask[t] = (uint8_t)dp_bal_children(&B, dim, m->key, L, m->key[i]);
    }
    for (int L = 1; L < nl; ++L) /* balMergeNew */
        for (int64_t j = 0; j < B.an[L]; ++j) {
            const int64_t t = dp_bal_new_to(&B, m->key, L, j), par = dp_bal_parent(&B, dim, m->key, L, B.ak[L][j]);
            int32_t c[3];
            dp_morton_decode(dim, B.ak[L][j], c);
            if (par < 0) rc = -1;
            dp_write_tile(T, dim, t, L, c, par);
            T.childmask[t] = (uint8_t)dp_bal_children(&B, dim, m->key, L, B.ak[L][j]);
        }
    const size_t cells = (size_t)mesh_cells(m);
    for (int L = 1; L < nl && rc == 0; ++L) /* balFill, coarsest level first */
        for (int64_t j = 0; j < B.an[L]; ++j) {
            const int64_t t = dp_bal_new_to(&B, m->key, L, j), o = oidx[B.abase[L] + j];
            if (o >= 0)
                for (int f = 0; f < m->nf; ++f)
                    memcpy(out->field[f] + t * cells, old->field[f] + o * cells, cells * sizeof(float));
            else
                tile_fill(p, out, t, T.parent[t], dp_tile_octant(T.coord + 3 * t));
        }
    free(oidx);
    out->ntiles = at;
    mesh_index_levels(out);
    for (int L = 0; L < DP_MAX_LEVELS; ++L) free(ak[L]);
    return rc;
}

static void test_deck(const char *name, const char *text, const char *fill)
{
    deck_t d0, d1;
    char extra[128];
    snprintf(extra, sizeof extra, "fill = %s\n", fill);
    if (parse(text, extra, &d0) != 0) {
        CHECK(0, "%s: deck", name);
        return;
    }
    snprintf(extra, sizeof extra, "fill = %s\nbalance = 2:1\n", fill);
    if (parse(text, extra, &d1) != 0) {
        CHECK(0, "%s: balanced deck", name);
        return;
    }
    mesh_t a, b;
    if (build(&d0, &a) != 0 || build(&d1, &b) != 0) {
        CHECK(0, "%s: build", name);
        return;
    }
    CHECK(unbalanced(&a) > 0, "%s: the feature leaves the unbalanced build unbalanced (else the test shows nothing)", name);
    CHECK(unbalanced(&b) == 0, "%s: %lld tiles of the balanced build miss a neighbour's parent", name, unbalanced(&b));
    CHECK(b.ntiles > a.ntiles, "%s: balance adds tiles (%lld -> %lld)", name, (long long)a.ntiles, (long long)b.ntiles);
    /* the GPU engines' algorithm, emulated with the same functions, gives balance_close's mesh: after a
     * build (no old store), and as in a regrid, with an old store whose cells added tiles take where
     * it has them: the balanced build scaled by 3 (every added tile there), and the unbalanced build
     * with its cells doubled (none there) */
    {
        mesh_t e, ref, o1, o2;
        char why[256] = "", err[256] = "";
        long long fo = -1;
        balance_report_t br;
        CHECK(device_balance(&d1.p, &a, NULL, &e, &fo) == 0, "%s: the device's balance: a parent missing", name);
        CHECK(mesh_equal(&b, &e, why, sizeof why), "%s: the device's balance (emulated) equals balance_close: %s",
              name, why);
        mesh_free(&e);
        CHECK(mesh_copy(&o1, &b) == 0 && mesh_copy(&o2, &a) == 0, "copy");
        for (int f = 0; f < a.nf; ++f) {
            for (size_t i = 0; i < (size_t)b.ntiles * cells_of(&b); ++i) o1.field[f][i] *= 3.0f;
            for (size_t i = 0; i < (size_t)a.ntiles * cells_of(&a); ++i) o2.field[f][i] *= 2.0f;
        }
        const mesh_t *olds[2] = { &o1, &o2 };
        for (int k = 0; k < 2; ++k) {
            CHECK(mesh_copy(&ref, &a) == 0, "copy");
            CHECK(balance_close(&d1.p, &ref, olds[k], 0, &br, err, sizeof err) == 0, "%s: balance_close: %s", name, err);
            CHECK(device_balance(&d1.p, &a, olds[k], &e, &fo) == 0, "%s: the device's balance: a parent missing", name);
            CHECK(mesh_equal(&ref, &e, why, sizeof why) && fo == br.from_old && br.added == e.ntiles - a.ntiles &&
                      fo == (k == 0 ? br.added : 0),
                  "%s: the device's balance with an old store (%d) equals balance_close: %s; from old %lld and %lld of "
                  "%lld", name, k, why, fo, br.from_old, br.added);
            mesh_free(&e);
            mesh_free(&ref);
        }
        mesh_free(&o1);
        mesh_free(&o2);
    }
    /* a superset: every tile of the unbalanced build is there, with the same cells */
    long long lost = 0, changed = 0;
    const size_t cells = (size_t)mesh_cells(&a);
    for (dp_tidx t = 0; t < a.ntiles; ++t) {
        const dp_tidx u = find(&b, a.level[t], a.coord + 3 * t);
        if (u < 0) ++lost;
        else
            for (int f = 0; f < a.nf; ++f)
                changed += memcmp(a.field[f] + t * cells, b.field[f] + u * cells, cells * sizeof(float)) != 0;
    }
    CHECK(lost == 0 && changed == 0, "%s: the criterion's tiles all kept (%lld lost), their cells unchanged (%lld)",
          name, lost, changed);
    /* every added tile is needed: balance_needs marks its octant in its parent (the tiles balance adds
       are not refined by the criterion: refine, then balance, as p4est) */
    uint8_t *need = malloc((size_t)b.ntiles);
    balance_needs(&b, b.level_start, b.nlevels, need);
    long long spare = 0;
    for (dp_tidx u = b.level_start[1]; u < b.ntiles; ++u)
        if (find(&a, b.level[u], b.coord + 3 * u) < 0 && !(need[b.parent[u]] >> dp_tile_octant(b.coord + 3 * u) & 1))
            ++spare;
    CHECK(spare == 0, "%s: %lld added tiles that balance does not need", name, spare);
    free(need);
    /* validation: the balanced mesh passes; the unbalanced one, declared balanced, fails as incomplete */
    valid_report_t v;
    valid_check(&b, &d1.p, &v);
    CHECK(v.passed, "%s: the balanced build validates: %s", name, v.first_failure);
    valid_check(&a, &d1.p, &v);
    CHECK(!v.passed && strstr(v.first_failure, "needed by 2:1 balance"), "%s: an unbalanced mesh fails: %s", name,
          v.first_failure);
    valid_check(&b, &d0.p, &v);
    CHECK(!v.passed && strstr(v.first_failure, "which the criterion does not flag ("),
          "%s: the balanced mesh declared unbalanced fails on a tile balance added: %s", name, v.first_failure);
    /* a regrid keeps it balanced: to time 0 (nothing moves) it is the same mesh */
    mesh_t c;
    char err[512];
    regrid_report_t rr;
    CHECK(mesh_copy(&c, &b) == 0, "copy");
    CHECK(engine_regrid(DP_VARIANT_CPU, &d1, &c, 0.0, &rr, err, sizeof err) == 0, "%s: regrid: %s", name, err);
    CHECK(unbalanced(&c) == 0, "%s: the regrid keeps the mesh balanced", name);
    valid_check(&c, &d1.p, &v);
    CHECK(v.passed, "%s: the regridded mesh validates: %s", name, v.first_failure);
    CHECK(rr.kept + rr.removed == rr.tiles_before && rr.kept + rr.added == rr.tiles_after && rr.tiles_after == c.ntiles,
          "%s: regrid counts add up: +%lld -%lld kept %lld, %lld -> %lld", name, rr.added, rr.removed, rr.kept,
          rr.tiles_before, rr.tiles_after);
    if (strcmp(fill, "model") == 0) { /* a regrid samples the model: with fill = model, as the build did */
        char why[256];
        CHECK(mesh_equal(&b, &c, why, sizeof why), "%s: a model regrid to time 0 changes nothing: %s", name, why);
        CHECK(rr.added == 0 && rr.removed == 0, "%s: nothing added or removed: +%lld -%lld", name, rr.added, rr.removed);
    }
    mesh_free(&c);
    mesh_free(&a);
    mesh_free(&b);
    deck_free(&d0);
    deck_free(&d1);
}

int main(void)
{
    test_deck("default", k_default, "prolong");
    test_deck("2D prolong", k_deck2, "prolong");
    test_deck("2D model", k_deck2, "model");
    test_deck("3D prolong", k_deck3, "prolong");
    test_deck("3D model", k_deck3, "model");
    return TEST_DONE();
}
