/* test_partition.c - root ranges along the Morton curve: every split of a mesh into 1..7 parts,
 * refined part by part and placed back, is the serially refined mesh bit for bit, and the checksums
 * folded from the parts' chunks equal the whole mesh's. This is what an MPI run does, without MPI. */
#include <stdlib.h>
#include <string.h>

#include "src/deck.h"
#include "src/engine.h"
#include "src/partition.h"
#include "validation/valid.h"
#include "tests/test_util.h"

static const char *k_deck2 =
    "dim = 2\nroot = 5 3\ntile_size = 8\nmax_level = 4\nthreshold = 0.05\nvariant = cpu\n"
    "model.objects = a g\nmodel.a.type = sphere\nmodel.a.center = 0.3 0.2\nmodel.a.radius = 0.15\n"
    "model.g.type = gaussian\nmodel.g.center = 0.55 0.3\nmodel.g.radius = 0.05\nmodel.g.inside = 3\n";
static const char *k_deck3 =
    "dim = 3\nroot = 3 2 2\ntile_size = 4\nmax_level = 3\nthreshold = 0.1\nvariant = cpu\n"
    "model.objects = b\nmodel.b.type = box\nmodel.b.center = 0.3 0.2 0.4\nmodel.b.radius = 0.11 0.07 0.2\n";
static const char *k_deck_tiny = /* two roots, more ranks than roots */
    "dim = 2\nroot = 2 1\ntile_size = 4\nmax_level = 3\nthreshold = 0.05\nvariant = cpu\n"
    "model.objects = a\nmodel.a.type = sphere\nmodel.a.center = 0.1 0.05\nmodel.a.radius = 0.04\n";

static void check_split(const int64_t *w, dp_tidx n, int nr, const dp_tidx *first, const char *tag)
{
    int64_t total = 0, wmax = 0;
    for (dp_tidx i = 0; i < n; ++i) {
        total += w[i];
        if (w[i] > wmax) wmax = w[i];
    }
    CHECK(first[0] == 0 && first[nr] == n, "%s: split covers [0, %lld)", tag, (long long)n);
    for (int r = 0; r < nr; ++r) {
        CHECK(first[r] <= first[r + 1], "%s: ranges are ordered", tag);
        int64_t wr = 0;
        for (dp_tidx i = first[r]; i < first[r + 1]; ++i) wr += w[i];
        /* midpoint rule: a rank's weight is its share, give or take one root on each end */
        CHECK(wr <= total / nr + 2 * wmax, "%s: rank %d of %d has weight %lld of %lld (max root %lld)", tag, r, nr,
              (long long)wr, (long long)total, (long long)wmax);
    }
}

/* Refine `in` as nr parts and compare with the serial result `ref` and its report `vref`. */
static void split_and_refine(const deck_t *d, const mesh_t *in, int nr, const mesh_t *ref, const valid_report_t *vref,
                             const char *tag)
{
    char err[1024], why[512];
    const dp_tidx nroots = in->level_start[1];
    int64_t *w = malloc((size_t)nroots * sizeof *w);
    dp_tidx *first = malloc(((size_t)nr + 1) * sizeof *first);
    mesh_t *part = calloc((size_t)nr, sizeof *part);
    part_weights(&d->p, in, w);
    part_split(w, nroots, nr, first);
    check_split(w, nroots, nr, first, tag);

    /* refine each part alone, as a rank would */
    int gl = 0;
    for (int r = 0; r < nr; ++r) {
        dp_tidx lo[DP_MAX_LEVELS], hi[DP_MAX_LEVELS];
        part_ranges(in, first[r], first[r + 1], lo, hi);
        CHECK(part_extract(in, lo, hi, &part[r]) == 0, "%s: extract", tag);
        CHECK(part[r].level_start[1] == first[r + 1] - first[r], "%s: rank %d holds its roots", tag, r);
        if (part_has_frontier(&part[r], in->nlevels)) {
            refine_report_t rr;
            CHECK(engine_refine(DP_VARIANT_CPU, d, &part[r], &rr, err, sizeof err) == 0, "%s: refine part %d: %s", tag,
                  r, err);
        }
        if (part[r].nlevels > gl) gl = part[r].nlevels;
    }
    CHECK(gl == ref->nlevels, "%s: %d levels vs %d", tag, gl, ref->nlevels);

    /* global offsets: level L of rank r starts after level L of ranks < r */
    dp_tidx (*gstart)[DP_MAX_LEVELS] = calloc((size_t)nr, sizeof *gstart);
    dp_tidx off = 0;
    for (int L = 0; L < gl; ++L)
        for (int r = 0; r < nr; ++r) {
            gstart[r][L] = off;
            if (L < part[r].nlevels) off += part[r].level_start[L + 1] - part[r].level_start[L];
        }
    CHECK(off == ref->ntiles, "%s: %lld tiles vs %lld", tag, (long long)off, (long long)ref->ntiles);

    /* validate each part, fold the chunks in rank order, compare with the whole mesh's report */
    valid_parts_t all = { .nlevels = gl, .nf = ref->nf };
    valid_report_t vsum = { 0 };
    for (int r = 0; r < nr; ++r) {
        valid_report_t vr;
        valid_parts_t pr;
        const valid_opts_t o = { .complete = 1, .roots = first[r + 1] - first[r], .gstart = gstart[r] };
        valid_check_part(&part[r], &d->p, &o, &vr, &pr);
        CHECK(vr.passed, "%s: part %d of %d fails validation: %s", tag, r, nr, vr.first_failure);
        for (int L = 0; L < pr.nlevels; ++L) {
            all.chunk[L] = realloc(all.chunk[L], (size_t)(all.n[L] + pr.n[L] + 1) * sizeof(valid_chunk_t));
            memcpy(all.chunk[L] + all.n[L], pr.chunk[L], (size_t)pr.n[L] * sizeof(valid_chunk_t));
            all.n[L] += pr.n[L];
        }
        valid_parts_free(&pr);
    }
    valid_fold(&all, &d->p, &vsum);
    valid_parts_free(&all);
    CHECK(vsum.tree_hash == vref->tree_hash && vsum.total_hash == vref->total_hash, "%s: hashes %016llx %016llx vs %016llx %016llx",
          tag, (unsigned long long)vsum.tree_hash, (unsigned long long)vsum.total_hash,
          (unsigned long long)vref->tree_hash, (unsigned long long)vref->total_hash);
    for (int L = 0; L < gl; ++L)
        for (int f = 0; f < ref->nf; ++f)
            CHECK(memcmp(&vsum.sum[L][f], &vref->sum[L][f], sizeof(double)) == 0 && vsum.hash[L][f] == vref->hash[L][f],
                  "%s: level %d field %d checksum %.17g vs %.17g", tag, L, f, vsum.sum[L][f], vref->sum[L][f]);

    /* place the parts into one mesh: it is the serial mesh, bit for bit */
    mesh_t g = *ref;
    CHECK(mesh_alloc(&g, ref->ntiles) == 0, "alloc");
    for (int r = 0; r < nr; ++r) part_place(&g, &part[r], gstart[r]);
    g.ntiles = ref->ntiles;
    mesh_index_levels(&g);
    CHECK(mesh_equal(&g, ref, why, sizeof why), "%s: placed parts differ from the serial mesh: %s", tag, why);
    mesh_free(&g);
    for (int r = 0; r < nr; ++r) mesh_free(&part[r]);
    free(part);
    free(gstart);
    free(first);
    free(w);
}

static void test_deck(const char *text, int restart_level, const char *name)
{
    char err[1024], why[512], tag[128];
    deck_t d;
    CHECK(deck_parse_text(&d, "test", text, err, sizeof err) == 0, "deck: %s", err);
    d.quiet = 1;
    mesh_t in, ref;
    CHECK(engine_make_level0(&d, &in, err, sizeof err) == 0, "level 0: %s", err);
    refine_report_t rr;
    if (restart_level > 0) { /* an input that is already refined (a restart) */
        const int keep = d.p.max_level;
        d.p.max_level = restart_level;
        CHECK(engine_refine(DP_VARIANT_CPU, &d, &in, &rr, err, sizeof err) == 0, "pre-refine: %s", err);
        d.p.max_level = keep;
    }
    CHECK(mesh_copy(&ref, &in) == 0, "copy");
    CHECK(engine_refine(DP_VARIANT_CPU, &d, &ref, &rr, err, sizeof err) == 0, "refine: %s", err);
    valid_report_t vref;
    valid_check(&ref, &d.p, &vref);
    CHECK(vref.passed, "%s: serial mesh fails validation: %s", name, vref.first_failure);

    /* extracting every rank's part of the refined mesh and placing it back is the identity */
    for (int nr = 1; nr <= 4; ++nr) {
        const dp_tidx nroots = ref.level_start[1];
        dp_tidx first[8];
        int64_t *w = malloc((size_t)nroots * sizeof *w);
        for (dp_tidx i = 0; i < nroots; ++i) w[i] = 1;
        part_split(w, nroots, nr, first);
        free(w);
        mesh_t g = ref;
        CHECK(mesh_alloc(&g, ref.ntiles) == 0, "alloc");
        dp_tidx at[DP_MAX_LEVELS] = { 0 };
        for (int r = 0; r < nr; ++r) {
            dp_tidx lo[DP_MAX_LEVELS], hi[DP_MAX_LEVELS], gs[DP_MAX_LEVELS];
            part_ranges(&ref, first[r], first[r + 1], lo, hi);
            for (int L = 0; L < ref.nlevels; ++L) {
                CHECK(r == 0 ? lo[L] == ref.level_start[L] : lo[L] == at[L], "%s: ranges are contiguous", name);
                gs[L] = lo[L];
                at[L] = hi[L];
            }
            mesh_t p;
            CHECK(part_extract(&ref, lo, hi, &p) == 0, "extract");
            part_place(&g, &p, gs);
            mesh_free(&p);
        }
        for (int L = 0; L < ref.nlevels; ++L) CHECK(at[L] == ref.level_start[L + 1], "%s: ranges cover level %d", name, L);
        g.ntiles = ref.ntiles;
        mesh_index_levels(&g);
        CHECK(mesh_equal(&g, &ref, why, sizeof why), "%s: extract+place with %d parts: %s", name, nr, why);
        mesh_free(&g);
    }

    for (int nr = 1; nr <= 7; ++nr) {
        snprintf(tag, sizeof tag, "%s, %d parts", name, nr);
        split_and_refine(&d, &in, nr, &ref, &vref, tag);
    }
    mesh_free(&in);
    mesh_free(&ref);
    deck_free(&d);
}

static void test_leaf_ranges(void)
{
    const int64_t ns[] = { 0, 1, 5, 7, 1000003 };
    for (size_t i = 0; i < sizeof ns / sizeof *ns; ++i)
        for (int nr = 1; nr <= 6; ++nr) {
            int64_t prev = 0, lo, hi;
            for (int r = 0; r < nr; ++r) {
                part_leaf_range(ns[i], nr, r, &lo, &hi);
                CHECK(lo == prev && hi >= lo && hi - lo <= ns[i] / nr + 1, "leaf range %d of %d over %lld", r, nr,
                      (long long)ns[i]);
                prev = hi;
            }
            CHECK(prev == ns[i], "leaf ranges cover %lld", (long long)ns[i]);
        }
}

int main(void)
{
    test_deck(k_deck2, 0, "2D");
    test_deck(k_deck2, 2, "2D restart from level 2");
    test_deck(k_deck3, 0, "3D");
    test_deck(k_deck3, 1, "3D restart from level 1");
    test_deck(k_deck_tiny, 0, "2 roots");
    test_deck(k_deck_tiny, 1, "2 roots, restart");
    test_leaf_ranges();
    return TEST_DONE();
}
