/* test_valid.c - unit test of validation/valid.c.
 *
 * Builds small 2D and 3D hierarchies by hand with the shared numerics (model sampling, criterion,
 * prolongation from core.h), so they are valid by construction, checks that valid_check passes them,
 * then corrupts copies one way at a time and checks that each corruption is detected and named by
 * the first failure. Exit 0 when every check holds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "src/core.h"
#include "src/mesh.h"
#include "src/tile.h"
#include "src/valid_tile.h"
#include "validation/valid.h"

#include "tests/test_util.h"

/* A sphere step in field 0 (what the jump criterion refines on) plus a gaussian bump in both
 * fields, so prolongation slopes are nonzero and conservation is a real test. */
static dp_params make_params(int dim, int B, int max_level, int fill)
{
    dp_params p;
    memset(&p, 0, sizeof p);
    p.dim = dim;
    p.B = B;
    p.nf = 2;
    p.max_level = max_level;
    p.fill = fill;
    p.crit = DP_CRIT_JUMP;
    p.crit_field = 0;
    p.threshold_f = 0.2f;
    p.threshold = 0.2;
    p.h0 = 1.0 / (2.0 * B); /* 2 root tiles per axis on the unit square/cube */
    p.nobj = 2;
    p.obj[0].kind = DP_OBJ_ELLIPSOID;
    p.obj[1].kind = DP_OBJ_GAUSSIAN;
    for (int a = 0; a < 3; ++a) {
        p.obj[0].center[a] = 0.5;
        p.obj[0].radius[a] = 0.3;
        p.obj[1].center[a] = a == 0 ? 0.3 : 0.6;
        p.obj[1].radius[a] = 0.2;
    }
    p.obj[0].inside[0] = 1.0;
    p.obj[1].inside[0] = 0.5;
    p.obj[1].inside[1] = 3.0;
    p.obj[1].outside[1] = 1.0;
    return p;
}

/* The reference construction: roots in Morton order, then children of flagged octants, parent by
 * parent and octant by octant, which is canonical order (design.md). It uses the core's per-tile
 * functions (tile_octant_flags, dp_write_tile, dp_write_child, tile_fill), as the engines do:
 * test_core checks the flag loop against an independent reference, and validation checks what
 * they build. */
static void build_mesh(mesh_t *m, const dp_params *p)
{
    memset(m, 0, sizeof *m);
    m->dim = p->dim;
    m->B = p->B;
    m->nf = p->nf;
    m->root[0] = m->root[1] = 2;
    m->root[2] = p->dim == 3 ? 2 : 1;
    m->h0 = p->h0;
    strcpy(m->field_name[0], "rho");
    strcpy(m->field_name[1], "temp");
    if (mesh_alloc(m, 64) != 0) exit(2);
    const int nroot = m->root[0] * m->root[1] * m->root[2];
    for (int r = 0; r < nroot; ++r) { /* 2x2(x2) roots: Morton order is r itself */
        const int32_t c[3] = { r & 1, (r >> 1) & 1, (r >> 2) & 1 };
        dp_write_tile(mesh_tiles(m), m->dim, r, 0, c, -1);
        tile_fill(p, m, r, -1, 0);
    }
    m->ntiles = nroot;
    dp_tidx s = 0, e = nroot;
    for (int L = 0; L < p->max_level; ++L) {
        for (dp_tidx q = s; q < e; ++q) {
            const unsigned fl = tile_octant_flags(p, m, q);
            for (int o = 0; o < (1 << p->dim); ++o) {
                if (!(fl >> o & 1)) continue;
                if (mesh_reserve(m, m->ntiles + 1) != 0) exit(2);
                dp_write_child(mesh_tiles(m), m->dim, m->ntiles, L + 1, q, o);
                tile_fill(p, m, m->ntiles, q, o);
                ++m->ntiles;
            }
            m->childmask[q] = (uint8_t)fl;
        }
        s = e;
        e = m->ntiles;
        if (s == e) break;
    }
    mesh_index_levels(m);
}

/* Insert a tile at pos (shifting later tiles and their parent links), cells prolonged from its
 * parent, childmasks recomputed: only what the caller intends is wrong afterwards. */
static void insert_tile(mesh_t *m, const dp_params *p, dp_tidx pos, int level, const int32_t *c, int64_t parent)
{
    if (mesh_reserve(m, m->ntiles + 1) != 0) exit(2);
    mesh_copy_tiles(m, pos + 1, m, pos, m->ntiles - pos);
    ++m->ntiles;
    for (dp_tidx t = 0; t < m->ntiles; ++t)
        if (m->parent[t] >= pos) ++m->parent[t];
    if (parent >= pos) ++parent;
    dp_write_tile(mesh_tiles(m), m->dim, pos, level, c, parent);
    tile_fill(p, m, pos, parent, dp_tile_octant(c));
    mesh_index_children(m);
    mesh_index_levels(m);
}

/* Remove a tile that has no children. */
static void remove_leaf(mesh_t *m, dp_tidx pos)
{
    mesh_copy_tiles(m, pos, m, pos + 1, m->ntiles - pos - 1);
    --m->ntiles;
    for (dp_tidx t = 0; t < m->ntiles; ++t)
        if (m->parent[t] > pos) --m->parent[t];
    mesh_index_children(m);
    mesh_index_levels(m);
}

/* Swap tiles a and b with everything they own, keeping their children attached. */
static void swap_tiles(mesh_t *m, dp_tidx a, dp_tidx b)
{
    mesh_t tmp = *m;
    if (mesh_alloc(&tmp, 1) != 0) exit(2);
    mesh_copy_tiles(&tmp, 0, m, a, 1);
    mesh_copy_tiles(m, a, m, b, 1);
    mesh_copy_tiles(m, b, &tmp, 0, 1);
    mesh_free(&tmp);
    for (dp_tidx t = 0; t < m->ntiles; ++t) {
        if (m->parent[t] == a) m->parent[t] = b;
        else if (m->parent[t] == b) m->parent[t] = a;
    }
}

static dp_tidx first_of_level(const mesh_t *m, int L) { return m->level_start[L]; }
static dp_tidx count_of_level(const mesh_t *m, int L) { return m->level_start[L + 1] - m->level_start[L]; }

static void expect_device_same(const char *name, const mesh_t *m, const dp_params *p, const dp_tidx *gstart);
static void expect_streamed_same(const char *tag, const mesh_t *m, const dp_params *p, const valid_report_t *want,
                                 int complete);

/* Run the check on a corrupted copy and require a failure whose message contains every `want`. */
static void expect_failure(const char *name, const mesh_t *m, const dp_params *p, const char *want1, const char *want2)
{
    valid_report_t r;
    valid_check(m, p, &r);
    CHECK(!r.passed && r.nfail > 0, "%s: corruption not detected (nfail %lld)", name, r.nfail);
    CHECK(strstr(r.first_failure, want1) != NULL, "%s: first failure \"%s\" does not mention \"%s\"", name,
          r.first_failure, want1);
    if (want2)
        CHECK(strstr(r.first_failure, want2) != NULL, "%s: first failure \"%s\" does not mention \"%s\"", name,
              r.first_failure, want2);
    printf("  detected %-22s (%lld failed checks): %s\n", name, r.nfail, r.first_failure);
    expect_device_same(name, m, p, NULL);
    expect_streamed_same(name, m, p, &r, m->nlevels > 1);
}

static void expect_pass(const char *name, const mesh_t *m, const dp_params *p, valid_report_t *r)
{
    valid_check(m, p, r);
    expect_device_same(name, m, p, NULL);
    CHECK(r->passed && r->nfail == 0 && r->first_failure[0] == '\0', "%s: valid mesh rejected: %s", name,
          r->first_failure);
}

static void test_corruptions(const char *tag, const mesh_t *good, const dp_params *p)
{
    char name[64], want[64];
    mesh_t m;
    const int nlv = good->nlevels, fin = nlv - 1; /* fin: the finest level */
    const size_t cells = (size_t)mesh_cells(good);

    /* wrong parent: a finest-level tile pointed at another tile of the parent level */
    mesh_copy(&m, good);
    dp_tidx t = first_of_level(&m, fin);
    int64_t other = m.parent[t] == first_of_level(&m, fin - 1) ? first_of_level(&m, fin - 1) + 1
                                                                : first_of_level(&m, fin - 1);
    m.parent[t] = other;
    snprintf(name, sizeof name, "%s wrong parent", tag);
    snprintf(want, sizeof want, "tile %lld ", (long long)t);
    expect_failure(name, &m, p, "does not lie inside its parent", want);
    m.parent[t] = m.ntiles + 5;
    snprintf(name, sizeof name, "%s parent out of range", tag);
    expect_failure(name, &m, p, "out of range", want);
    m.parent[t] = 0; /* a root: wrong level unless fin == 1 */
    snprintf(name, sizeof name, "%s parent level", tag);
    expect_failure(name, &m, p, fin == 1 ? "does not lie inside" : "expected level", want);
    mesh_free(&m);

    /* child in an unflagged octant: find a parent one level above the finest with a free octant */
    mesh_copy(&m, good);
    dp_tidx q = -1;
    unsigned fl = 0;
    for (dp_tidx s = first_of_level(&m, fin - 1); s < m.level_start[fin] && q < 0; ++s) {
        fl = tile_octant_flags(p, &m, s);
        if (fl != (1u << (1 << p->dim)) - 1u) q = s;
    }
    CHECK(q >= 0, "%s: no parent with an unflagged octant to corrupt", tag);
    if (q >= 0) {
        int o = 0;
        while (fl >> o & 1) ++o;
        int32_t c[3];
        dp_child_coord(m.coord + 3 * q, o, c);
        const uint64_t key = dp_morton(m.dim, c[0], c[1], c[2]);
        dp_tidx pos = m.level_start[fin];
        while (pos < m.ntiles && m.key[pos] < key) ++pos;
        insert_tile(&m, p, pos, fin, c, q);
        snprintf(name, sizeof name, "%s unflagged octant", tag);
        snprintf(want, sizeof want, "tile %lld ", (long long)pos);
        expect_failure(name, &m, p, "which the criterion does not flag", want);
    }
    mesh_free(&m);

    /* duplicates: a finest-level tile repeated right after itself, and a repeated root */
    mesh_copy(&m, good);
    t = first_of_level(&m, fin) + 1;
    int32_t dup[3];
    memcpy(dup, m.coord + 3 * t, sizeof dup); /* insert_tile may move the arrays */
    insert_tile(&m, p, t + 1, fin, dup, m.parent[t]);
    snprintf(name, sizeof name, "%s duplicate tile", tag);
    snprintf(want, sizeof want, "tile %lld ", (long long)(t + 1));
    expect_failure(name, &m, p, "duplicate tile", want);
    mesh_free(&m);
    mesh_copy(&m, good);
    memcpy(dup, m.coord + 3 * 1, sizeof dup);
    insert_tile(&m, p, 2, 0, dup, -1);
    snprintf(name, sizeof name, "%s duplicate root", tag);
    expect_failure(name, &m, p, "duplicate tile", "tile 2 ");
    mesh_free(&m);

    /* level beyond the cap: the same mesh checked against a lower max_level */
    dp_params low = *p;
    low.max_level = fin - 1;
    snprintf(name, sizeof name, "%s level beyond cap", tag);
    snprintf(want, sizeof want, "tile %lld ", (long long)first_of_level(good, fin));
    expect_failure(name, good, &low, "beyond the cap", want);

    /* NaN and Inf in a level-1 tile */
    mesh_copy(&m, good);
    t = first_of_level(&m, 1) + count_of_level(&m, 1) / 2;
    m.field[1][t * cells + 3] = NAN;
    snprintf(name, sizeof name, "%s NaN", tag);
    snprintf(want, sizeof want, "tile %lld ", (long long)t);
    expect_failure(name, &m, p, "not finite", want);
    m.field[1][t * cells + 3] = -INFINITY;
    snprintf(name, sizeof name, "%s Inf", tag);
    expect_failure(name, &m, p, "field temp cell 3", "not finite");
    mesh_free(&m);

    /* out of order: two tiles of level 1 swapped with everything they own */
    mesh_copy(&m, good);
    t = first_of_level(&m, 1);
    swap_tiles(&m, t, t + 1);
    snprintf(name, sizeof name, "%s out-of-order key", tag);
    snprintf(want, sizeof want, "tile %lld ", (long long)(t + 1));
    expect_failure(name, &m, p, "out of canonical order", want);
    mesh_free(&m);

    /* a key that is not the Morton key of the coords */
    mesh_copy(&m, good);
    t = first_of_level(&m, fin);
    m.key[t] ^= 1u << 4;
    snprintf(name, sizeof name, "%s wrong key", tag);
    expect_failure(name, &m, p, "Morton key", NULL);
    mesh_free(&m);

    /* a prolonged value perturbed: far below any visible change, far above float rounding */
    mesh_copy(&m, good);
    t = first_of_level(&m, fin);
    float *v = &m.field[1][t * cells + cells / 2];
    *v = nextafterf(*v, INFINITY); /* one ulp: within the tolerance */
    valid_report_t r;
    snprintf(name, sizeof name, "%s one-ulp change", tag);
    expect_pass(name, &m, p, &r);
    *v *= 1.0f + 1e-4f;
    snprintf(name, sizeof name, "%s conservation", tag);
    snprintf(want, sizeof want, "tile %lld ", (long long)t);
    expect_failure(name, &m, p, "field temp not conserved", want);
    mesh_free(&m);

    /* a child dropped by the engine: the parent's flagged octant has no child */
    mesh_copy(&m, good);
    t = m.ntiles - 1;
    q = m.parent[t];
    remove_leaf(&m, t);
    snprintf(name, sizeof name, "%s missing child", tag);
    snprintf(want, sizeof want, "tile %lld ", (long long)q);
    expect_failure(name, &m, p, "refinement incomplete", want);
    mesh_free(&m);

    /* childmask out of step with the children */
    mesh_copy(&m, good);
    m.childmask[1] ^= 1;
    snprintf(name, sizeof name, "%s childmask", tag);
    expect_failure(name, &m, p, "childmask", "tile 1 ");
    mesh_free(&m);

    /* level index and root grid */
    mesh_copy(&m, good);
    m.level_start[1] -= 1;
    snprintf(name, sizeof name, "%s level_start", tag);
    expect_failure(name, &m, p, "level_start[1]", NULL);
    m.level_start[1] += 1;
    m.root[0] = 3;
    snprintf(name, sizeof name, "%s root count", tag);
    expect_failure(name, &m, p, "level 0 has", NULL);
    mesh_free(&m);

    /* parameters that do not describe the mesh */
    dp_params bad = *p;
    bad.B = p->B * 2;
    snprintf(name, sizeof name, "%s tile_size", tag);
    expect_failure(name, good, &bad, "tile_size", NULL);
}

/* What device/valid_gpu.cu computes, emulated on the host in the kernels' shape with the same
 * shared functions (src/valid_tile.h): children by OR (a bit already set: dup), flags over 32 lanes,
 * phase 2 as meta on lane 0 plus finite values and conservation with 32 lanes striding over the cells,
 * the chunks from tile starts (a level or root other than the tile before) and a fold per chunk. The
 * GPU's own run is tests/gpu_validate.sh; this checks the device's decomposition and
 * valid_check_device's assembly without a GPU. */
static void emulate_device(const mesh_t *m, const dp_params *p, int complete, dp_vdev *g)
{
    const dp_tidx n = m->ntiles;
    const int cells = mesh_cells(m);
    memset(g, 0, sizeof *g);
    uint8_t *flags = calloc((size_t)n + 1, 1), *kids = calloc((size_t)n + 1, 1), *aux = calloc((size_t)n + 1, 1);
    dp_vctx c;
    memset(&c, 0, sizeof c);
    c.T = mesh_tiles(m);
    for (int f = 0; f < m->nf; ++f) c.field[f] = m->field[f];
    c.n = n, c.dim = m->dim, c.B = m->B, c.nf = m->nf, c.cells = cells, c.max_level = p->max_level, c.fill = p->fill;
    for (int a = 0; a < 3; ++a) c.root[a] = m->root[a];
    c.flags = flags, c.kids = kids, c.aux = aux;
    for (dp_tidx t = 0; t < n; ++t) { /* vPassA */
        const int L = m->level[t];
        if (L < 0 || L >= DP_MAX_LEVELS) continue;
        ++g->count[L];
        if (L + 1 > g->nlv) g->nlv = L + 1;
        if (t > 0 && L < m->level[t - 1]) g->unsorted = 1;
        if (dp_vparent_ok(&c, t)) {
            const uint8_t bit = (uint8_t)(1u << dp_tile_octant(m->coord + 3 * t));
            if (kids[m->parent[t]] & bit) g->dup = 1;
            kids[m->parent[t]] |= bit;
        }
    }
    c.complete_below = complete ? p->max_level : g->nlv - 1; /* vPrep */
    const int flag_below = c.complete_below > g->nlv - 1 ? c.complete_below : g->nlv - 1;
    for (dp_tidx t = 0; t < n; ++t) { /* vFlags */
        const int L = m->level[t];
        if (!(L >= 0 && L < flag_below && L < p->max_level)) continue;
        unsigned mask = 0;
        for (int lane = 0; lane < 32; ++lane)
            mask |= dp_tile_flags(p, m->field[p->crit_field] + (size_t)t * cells, dp_spacing(p, L), lane, 32, 1, NULL);
        flags[t] = (uint8_t)mask;
    }
    double mr = 0.0;
    for (dp_tidx t = 0; t < n; ++t) { /* vCheck */
        int stop;
        dp_tidx q;
        g->nfail += dp_vcheck_meta(&c, t, NULL, &stop, &q);
        if (stop) continue;
        for (int f = 0; f < m->nf; ++f) {
            int any = 0;
            for (int lane = 0; lane < 32; ++lane)
                any |= dp_vfirst_nonfinite(m->field[f] + (size_t)t * cells, cells, lane, 32) < cells;
            g->nfail += any;
        }
        if (p->fill == DP_FILL_PROLONG && q >= 0)
            for (int f = 0; f < m->nf; ++f) {
                int any = 0;
                for (int lane = 0; lane < 32; ++lane) {
                    int jb = -1;
                    any |= dp_vconserve(m->dim, m->B, m->field[f] + (size_t)t * cells, m->field[f] + (size_t)q * cells,
                                        dp_tile_octant(m->coord + 3 * t), lane, 32, &mr, &jb) > 0;
                }
                g->nfail += any;
            }
        g->nfail += dp_vcheck_children(&c, t, NULL);
    }
    g->maxrel = mr;
    /* vTileSums, vChunkStart, scan, vChunkPos, vChunkFold */
    dp_tidx k = -1;
    int prevL = -1;
    double s[DP_MAX_FIELDS];
    for (dp_tidx t = 0; t < n; ++t) {
        const int L = m->level[t];
        const int start = t == 0 || L != m->level[t - 1] ||
                          dp_root_key(m->dim, m->key[t], L) != dp_root_key(m->dim, m->key[t - 1], L);
        if (start) {
            ++k;
            if (L != prevL) g->chunk[L] = calloc((size_t)g->count[L] + 1, sizeof(dp_vchunk));
            prevL = L;
            dp_vchunk *ch = &g->chunk[L][g->nchunks[L]++];
            for (int f = 0; f < m->nf; ++f) s[f] = 0.0, ch->hash[f] = DP_FNV_OFFSET;
            ch->tree = DP_FNV_OFFSET;
        }
        dp_vchunk *ch = &g->chunk[L][g->nchunks[L] - 1];
        for (int f = 0; f < m->nf; ++f) {
            double ts;
            uint64_t th;
            dp_vtile_field(m->field[f] + (size_t)t * cells, cells, &ts, &th);
            dp_vchunk_add(&s[f], &ch->hash[f], ts, th);
            ch->sum[f] = s[f];
        }
        dp_vchunk_add(NULL, &ch->tree, 0.0, dp_vtile_tree(L, m->coord + 3 * t, m->parent[t]));
    }
    g->ntiles = n;
    g->ran = 1;
    free(flags);
    free(kids);
    free(aux);
}

/* The report from the emulated device passes equals the CPU validator's, bit for bit (passing: made
 * from the device's results; failing: the device counts the same failed checks and the CPU describes
 * them). gstart != NULL: as an MPI rank's part whose global indices differ from its own. */
static void expect_device_same(const char *name, const mesh_t *m, const dp_params *p, const dp_tidx *gstart)
{
    const valid_opts_t o = { .complete = m->nlevels > 1, .roots = -1, .gstart = gstart };
    valid_report_t rc, rg;
    valid_parts_t pc, pg;
    dp_vdev g;
    int by_cpu = -1;
    valid_check_part(m, p, &o, &rc, &pc);
    valid_fold(&pc, p, &rc);
    emulate_device(m, p, o.complete, &g);
    valid_check_device(m, p, &o, &g, &rg, &pg, &by_cpu);
    valid_fold(&pg, p, &rg);
    CHECK(memcmp(&rc, &rg, sizeof rc) == 0, "%s: the report from the device passes differs from the CPU's "
          "(passed %d/%d, nfail %lld/%lld, total hash %016llx/%016llx, \"%s\" / \"%s\")", name, rc.passed, rg.passed,
          rc.nfail, rg.nfail, (unsigned long long)rc.total_hash, (unsigned long long)rg.total_hash, rc.first_failure,
          rg.first_failure);
    CHECK(by_cpu == !rc.passed, "%s: report made by the %s for a %s mesh", name, by_cpu ? "CPU" : "device passes",
          rc.passed ? "valid" : "invalid");
    /* phases 1 and 4 (the header, the level index) are checked on the host by valid_check_device */
    const long long phase = rc.first_key >> 56;
    CHECK(rc.passed || (phase != 2 && phase != 3) || g.nfail > 0 || g.dup || g.unsorted,
          "%s: the device passes miss a failure the CPU finds: %s", name, rc.first_failure);
    /* without a duplicate child (which the CPU attributes by array order) the device counts what the CPU counts */
    int index_ok = g.count[0] == (dp_tidx)m->root[0] * m->root[1] * m->root[2] && m->nlevels == g.nlv && !g.unsorted;
    for (int L = 0, s = 0; L < g.nlv && index_ok; s += (int)g.count[L], ++L) index_ok = m->level_start[L] == s;
    if (!g.dup && (phase == 2 || phase == 3) && index_ok) /* no phase-4 failure among the CPU's */
        CHECK(g.nfail == rc.nfail, "%s: the device passes count %lld failed checks, the CPU %lld", name, g.nfail,
              rc.nfail);
    valid_parts_free(&pc);
    valid_parts_free(&pg);
    dp_vdev_free(&g);
}


/* A feeder for valid_opts_t.wait: the cells of the mesh under check arrive tile by tile from src
 * (they are NaN until then), as `dpamr check` reads them; fail_at >= 0: the read fails there. */
typedef struct {
    const mesh_t *src;
    mesh_t *dst;
    dp_tidx in, fail_at, last_asked;
    int calls, backwards;
} feeder_t;

static dp_tidx feeder_wait(void *ctx, dp_tidx tiles)
{
    feeder_t *f = ctx;
    ++f->calls;
    if (tiles < f->last_asked) f->backwards = 1;
    f->last_asked = tiles;
    if (f->fail_at >= 0 && tiles > f->fail_at) return -1;
    const dp_tidx upto = tiles + 3 < f->src->ntiles ? tiles + 3 : f->src->ntiles; /* a little more than asked */
    const size_t cells = (size_t)mesh_cells(f->src);
    for (int k = 0; k < f->src->nf; ++k)
        memcpy(f->dst->field[k] + (size_t)f->in * cells, f->src->field[k] + (size_t)f->in * cells,
               (size_t)(upto - f->in) * cells * sizeof(float));
    if (upto > f->in) f->in = upto;
    return f->in;
}

/* Validation while the cells arrive (valid_opts_t.wait, small blocks) gives the report of the whole
 * mesh bit for bit, reads no cell before it is in (those are NaN until then), and says so when the
 * cells stop coming. */
static void expect_streamed_same(const char *tag, const mesh_t *m, const dp_params *p, const valid_report_t *want,
                                 int complete)
{
    for (int run = 0; run < 4; ++run) { /* failing or not; every thread, or 3 while cells are to come */
        const int failing = run & 1, wait_threads = run >> 1 ? 3 : 0;
        mesh_t c;
        mesh_copy(&c, m);
        for (int k = 0; k < c.nf; ++k)
            for (size_t i = 0; i < (size_t)c.ntiles * (size_t)mesh_cells(&c); ++i) c.field[k][i] = NAN;
        feeder_t f = { .src = m, .dst = &c, .fail_at = failing ? m->ntiles / 2 : -1 };
        const valid_opts_t o = { .complete = complete, .roots = -1, .wait = feeder_wait, .wait_ctx = &f, .block = 5,
                                 .wait_threads = wait_threads };
        valid_report_t r;
        valid_check_opts(&c, p, &o, &r);
        CHECK((f.calls > 2 || !want->passed) && !f.backwards, "%s: the streamed check asked %d times%s", tag, f.calls,
              f.backwards ? ", going backwards" : "");
        if (failing && want->passed) {
            CHECK(!r.passed && strstr(r.first_failure, "could not all be read"),
                  "%s: cells that never came: \"%s\"", tag, r.first_failure);
        } else if (!failing) {
            CHECK(r.passed == want->passed && r.nfail == want->nfail && r.total_hash == want->total_hash &&
                      r.tree_hash == want->tree_hash && r.conservation_max_rel == want->conservation_max_rel &&
                      !memcmp(r.sum, want->sum, sizeof r.sum) && !memcmp(r.hash, want->hash, sizeof r.hash) &&
                      !strcmp(r.first_failure, want->first_failure),
                  "%s: the streamed check differs from the whole one (\"%s\" vs \"%s\")", tag, r.first_failure,
                  want->first_failure);
        }
        mesh_free(&c);
    }
}

static void test_dim(int dim, int B, int max_level)
{
    char tag[16];
    snprintf(tag, sizeof tag, "%dD", dim);
    dp_params p = make_params(dim, B, max_level, DP_FILL_PROLONG);
    mesh_t m;
    build_mesh(&m, &p);
    printf("%s: %lld tiles on %d levels (B=%d, max_level %d)\n", tag, (long long)m.ntiles, m.nlevels, B, max_level);
    CHECK(m.nlevels == max_level + 1, "%s: the test mesh should reach max_level (has %d levels)", tag, m.nlevels);
    CHECK(count_of_level(&m, 1) > 0 && count_of_level(&m, 1) < (dp_tidx)(1 << dim) * count_of_level(&m, 0),
          "%s: level 1 should refine part of level 0", tag);

    valid_report_t r, r2;
    expect_pass(tag, &m, &p, &r);
    valid_print(&r, &m);
    expect_device_same(tag, &m, &p, NULL);
    expect_streamed_same(tag, &m, &p, &r, 1);
    {
        dp_tidx gs[DP_MAX_LEVELS];
        for (int L = 0; L < DP_MAX_LEVELS; ++L) gs[L] = m.level_start[L] + 1000 * (L + 1);
        expect_device_same(tag, &m, &p, gs); /* tree hashes with other global parent indices: redone on the host */
    }
    CHECK(r.conservation_checked == 1 && r.conservation_tol == 1e-6, "%s: conservation not checked", tag);
    CHECK(r.conservation_max_rel > 0.0 && r.conservation_max_rel < 1e-6, "%s: max relative error %g", tag,
          r.conservation_max_rel);
    CHECK(r.nlevels == m.nlevels && r.nf == 2, "%s: report has %d levels, %d fields", tag, r.nlevels, r.nf);
    for (int L = 0; L < m.nlevels; ++L)
        CHECK(r.tiles[L] == count_of_level(&m, L), "%s: level %d tile count", tag, L);

    /* the level-0 sum is sum(value) * h0^dim */
    double s = 0.0;
    for (size_t i = 0; i < (size_t)count_of_level(&m, 0) * mesh_cells(&m); ++i) s += m.field[1][i];
    const double vol = dim == 3 ? p.h0 * p.h0 * p.h0 : p.h0 * p.h0;
    CHECK(fabs(r.sum[0][1] - s * vol) <= 1e-12 * fabs(s * vol), "%s: level-0 sum %.17g, expected %.17g", tag,
          r.sum[0][1], s * vol);

    /* checksums: identical on a rerun and for any thread count; sensitive to a single bit */
#ifdef _OPENMP
    const int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    valid_check(&m, &p, &r2);
    omp_set_num_threads(nt > 1 ? nt : 3);
#else
    valid_check(&m, &p, &r2);
#endif
    CHECK(r2.total_hash == r.total_hash && r2.tree_hash == r.tree_hash && r2.sum[1][0] == r.sum[1][0] &&
              r2.conservation_max_rel == r.conservation_max_rel,
          "%s: checksums differ between runs / thread counts", tag);
    mesh_t c;
    mesh_copy(&c, &m);
    c.field[0][c.ntiles * (dp_tidx)mesh_cells(&c) - 1] = nextafterf(c.field[0][c.ntiles * mesh_cells(&c) - 1], 9.0f);
    valid_check(&c, &p, &r2);
    CHECK(r2.hash[m.nlevels - 1][0] != r.hash[m.nlevels - 1][0] && r2.total_hash != r.total_hash &&
              r2.tree_hash == r.tree_hash,
          "%s: a one-bit change does not move the level hash", tag);
    mesh_free(&c);

    /* a corrupted mesh gets the same first failure and count with one thread and with several */
#ifdef _OPENMP
    mesh_copy(&c, &m);
    c.field[1][(c.ntiles - 1) * (dp_tidx)mesh_cells(&c)] = NAN;
    c.field[1][first_of_level(&c, 1) * (dp_tidx)mesh_cells(&c)] *= 2.0f;
    valid_check(&c, &p, &r);
    omp_set_num_threads(1);
    valid_check(&c, &p, &r2);
    omp_set_num_threads(nt);
    CHECK(!r.passed && r.nfail == r2.nfail && !strcmp(r.first_failure, r2.first_failure),
          "%s: failures depend on the thread count (%lld \"%s\" vs %lld \"%s\")", tag, r.nfail, r.first_failure,
          r2.nfail, r2.first_failure);
    expect_streamed_same(tag, &c, &p, &r, 1); /* the same failures, counted alike, while the cells arrive */
    mesh_free(&c);
#endif

    test_corruptions(tag, &m, &p);
    mesh_free(&m);

    /* fill=model: children sampled from the model, no conservation to check */
    p = make_params(dim, B, max_level, DP_FILL_MODEL);
    build_mesh(&m, &p);
    snprintf(tag, sizeof tag, "%dD model", dim);
    expect_pass(tag, &m, &p, &r);
    CHECK(r.conservation_checked == 0 && r.conservation_max_rel == 0.0, "%s: conservation checked for fill=model",
          tag);
    CHECK(m.nlevels > 2, "%s: model mesh has only %d levels", tag, m.nlevels);
    mesh_free(&m);

    /* a level-0-only mesh (what `dpamr mesh` writes) is valid although its octants are flagged */
    p = make_params(dim, B, 0, DP_FILL_PROLONG);
    build_mesh(&m, &p);
    p.max_level = max_level;
    snprintf(tag, sizeof tag, "%dD level 0", dim);
    expect_pass(tag, &m, &p, &r);
    mesh_free(&m);
}

/* Conservation at the bottom of float's range: a parent that is the mean of its children rounded
 * to a multiple of the subnormal step 2^-149 passes (relative error 0.33 there), one that is off by
 * more than that step fails. */
static void test_subnormal(void)
{
    const float q = 0x1p-149f;
    float uc[16] = { 0 }, up[16] = { 0 }; /* 2D, B = 4: parent cell 0 of octant 0 is child cells 0, 1, 4, 5 */
    uc[0] = uc[1] = uc[4] = q;
    uc[5] = 3 * q; /* mean 1.5 q: rounds to 2 q (ties to even) */
    double u, avg, rel;
    up[0] = 2 * q;
    CHECK(dp_vconserve_cell(2, 4, uc, up, 0, 0, &u, &avg, &rel) && rel == 0.0,
          "a subnormal parent rounded from its children's mean passes (rel %g)", rel);
    up[0] = 4 * q;
    CHECK(!dp_vconserve_cell(2, 4, uc, up, 0, 0, &u, &avg, &rel), "a subnormal parent 2.5 steps off fails");
    up[0] = 1e-6f;
    CHECK(!dp_vconserve_cell(2, 4, uc, up, 0, 0, &u, &avg, &rel), "a normal parent over subnormal children fails");
}

/* dp_vtile_field4 (the CPU validator's four tiles at once) gives each tile the sum and hash of
 * dp_vtile_field, written at the given stride, for any bits: zeros of both signs, subnormals,
 * infinities, NaNs and a deterministic spread of normal values. */
static void test_tile_group(void)
{
    enum { CELLS = 37, NF = 3 };
    float u[DP_VTILE_GROUP * CELLS];
    uint32_t x = 12345u;
    for (int i = 0; i < DP_VTILE_GROUP * CELLS; ++i) {
        x = x * 1664525u + 1013904223u;
        u[i] = (float)(x >> 8) * 0x1p-12f - 2000.0f;
    }
    u[0] = -0.0f, u[1] = 0x1p-149f, u[CELLS] = INFINITY, u[2 * CELLS + 5] = NAN, u[3 * CELLS + 7] = -0x1p-140f;
    double s4[DP_VTILE_GROUP * NF];
    uint64_t h4[DP_VTILE_GROUP * NF];
    for (int i = 0; i < DP_VTILE_GROUP * NF; ++i) s4[i] = -1.0, h4[i] = 0;
    dp_vtile_field4(u, CELLS, &s4[1], &h4[1], NF);
    for (int k = 0; k < DP_VTILE_GROUP; ++k) {
        double s;
        uint64_t h;
        dp_vtile_field(u + k * CELLS, CELLS, &s, &h);
        CHECK(memcmp(&s, &s4[k * NF + 1], sizeof s) == 0 && h == h4[k * NF + 1],
              "tile %d of a group: sum %.17g hash %016llx, one by one %.17g %016llx", k, s4[k * NF + 1],
              (unsigned long long)h4[k * NF + 1], s, (unsigned long long)h);
        CHECK(s4[k * NF] == -1.0 && h4[k * NF] == 0 && s4[k * NF + 2] == -1.0 && h4[k * NF + 2] == 0,
              "tile %d of a group: written outside its stride", k);
    }
}

int main(void)
{
    test_subnormal();
    test_tile_group();
    test_dim(2, 8, 3);
    test_dim(3, 4, 2);
    return TEST_DONE();
}
