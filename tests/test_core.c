/* test_core.c - the shared numerics of src/core.h: Morton keys, dp_exp, criterion, prolongation. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/core.h"
#include "tests/test_util.h"

static void test_morton(void)
{
    CHECK(dp_morton(2, 0, 0, 0) == 0, "origin");
    CHECK(dp_morton(2, 1, 0, 0) == 1 && dp_morton(2, 0, 1, 0) == 2 && dp_morton(2, 1, 1, 0) == 3, "2D unit");
    CHECK(dp_morton(3, 1, 0, 0) == 1 && dp_morton(3, 0, 1, 0) == 2 && dp_morton(3, 0, 0, 1) == 4, "3D unit");
    CHECK(dp_morton(2, 0xffff, 0, 0) == 0x55555555ull, "2D x spread");
    CHECK(dp_morton(3, 0x1fffff, 0, 0) == 0x1249249249249249ull, "3D x spread");
    /* a child's key is (parent key << dim) | octant: the canonical order follows from it */
    for (int dim = 2; dim <= 3; ++dim)
        for (int32_t i = 0; i < 9; ++i)
            for (int32_t j = 0; j < 7; ++j)
                for (int o = 0; o < (1 << dim); ++o) {
                    const int32_t pc[3] = { i, j, dim == 3 ? (i + j) % 5 : 0 };
                    int32_t cc[3];
                    dp_child_coord(pc, o, cc);
                    if (dim == 2) cc[2] = 0;
                    CHECK(dp_tile_octant(cc) == o, "octant %d of child coords %d,%d,%d", o, cc[0], cc[1], cc[2]);
                    const uint64_t pk = dp_morton(dim, pc[0], pc[1], pc[2]);
                    CHECK(dp_morton(dim, cc[0], cc[1], cc[2]) == ((pk << dim) | (uint64_t)o), "child key %d", o);
                }
}

static void test_exp(void)
{
    double worst = 0.0;
    for (int i = 0; i <= 200000; ++i) {
        const double x = -700.0 * i / 200000.0;
        const double rel = fabs(dp_exp(x) - exp(x)) / exp(x);
        if (rel > worst) worst = rel;
    }
    CHECK(worst < 1e-14, "dp_exp relative error %.3g", worst);
    CHECK(dp_exp(0.0) == 1.0, "exp(0) = %.17g", dp_exp(0.0));
    CHECK(dp_exp(-1000.0) == 0.0 && dp_exp(NAN) == 0.0, "underflow and NaN map to 0");

    /* dp_exp_row (the CPU's model tables) gives dp_exp's bits for every argument, the clamps'
       edges and the values they replace included */
    {
        double v[64], w[64];
        const double special[] = { 0.0, -0.0, 1e-300, 3.0, INFINITY, -INFINITY, NAN, -NAN, -708.0,
                                   nextafter(-708.0, 0.0), nextafter(-708.0, -1000.0), -707.9, -745.2,
                                   -1e300, -DBL_MIN, -5e-324, -0.5 * 0.6931471805599453, -1.0 };
        const int ns = (int)(sizeof special / sizeof special[0]);
        int same = 1;
        uint64_t r = 88172645463325252ull;
        for (int round = 0; round < 2000; ++round) {
            const int n = 1 + round % 64;
            for (int i = 0; i < n; ++i) {
                r ^= r << 13, r ^= r >> 7, r ^= r << 17;
                if (round % 3 == 0) v[i] = special[r % (uint64_t)ns];
                else if (round % 3 == 1) v[i] = -750.0 * (double)(r >> 11) / 9007199254740992.0;
                else memcpy(&v[i], &r, sizeof r); /* any bit pattern */
                w[i] = v[i];
            }
            dp_exp_row(w, n);
            for (int i = 0; i < n; ++i) {
                const double e = dp_exp(v[i]);
                same &= memcmp(&e, &w[i], sizeof e) == 0;
            }
        }
        CHECK(same, "dp_exp_row gives dp_exp's bits (special values, [-750, 0], random bit patterns)");
    }
}

/* The criterion read literally: cell (x, y, z) refines when the jump uc - un to one of its face
 * neighbours inside the tile, either way round, exceeds the limit (a NaN jump exceeds nothing).
 * No running maximum, no absolute value: the reference dp_flag_cell's fold (dp_jump_max) is checked
 * against, so a change to that fold cannot hide behind itself. */
static int ref_flag_cell(const dp_params *p, const float *u, int x, int y, int z, float lim)
{
    const int B = p->B, c = x + B * (y + B * z), q[3] = { x, y, z };
    for (int a = 0, s = 1; a < p->dim; ++a, s *= B)
        for (int side = -1; side <= 1; side += 2) {
            const int n = q[a] + side;
            if (n < 0 || n >= B) continue;
            const float d = u[c] - u[c + side * s];
            if (d > lim || -d > lim) return 1;
        }
    return 0;
}

/* The reference for dp_tile_flags, the flag loop every engine and validation run: written
 * independently of it on purpose (a plain z, y, x walk over the cells, each by ref_flag_cell, which
 * dp_flag_cell must agree with), so a fault in the shared loop cannot hide behind itself. Bit o of
 * the result: octant o has a flagged cell; *count: the flagged cells. */
static unsigned ref_octant_flags(const dp_params *p, const float *u, double h, int *count)
{
    const int B = p->B, nz = p->dim == 3 ? B : 1;
    const float lim = dp_flag_limit(p, h);
    unsigned mask = 0;
    *count = 0;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y)
            for (int x = 0; x < B; ++x) {
                const int want = ref_flag_cell(p, u, x, y, z, lim);
                CHECK(dp_flag_cell(p, u, x, y, z, h) == want, "dp_flag_cell(%d, %d, %d) is %d, the criterion %d", x,
                      y, z, !want, want);
                if (want) {
                    mask |= 1u << dp_octant_of(B, x, y, z);
                    ++*count;
                }
            }
    return mask;
}

/* dp_tile_flags in every way it is called (CPU, a warp's lanes, a block's threads, lazy, counting)
 * gives the reference's flags and count. */
static void check_tile_flags(const dp_params *p, const float *u, double h, const char *what)
{
    int want_n, n = -1;
    const unsigned want = ref_octant_flags(p, u, h, &want_n);
    CHECK(dp_tile_flags(p, u, h, 0, 1, 0, &n) == want && n == want_n, "%s: flags %#x (%d cells), reference %#x (%d)",
          what, dp_tile_flags(p, u, h, 0, 1, 0, NULL), n, want, want_n);
    CHECK(dp_tile_flags(p, u, h, 0, 1, 1, NULL) == want, "%s: lazy flags %#x, reference %#x", what,
          dp_tile_flags(p, u, h, 0, 1, 1, NULL), want);
    CHECK(dp_tile_row_flags(p, u, h, 0) == want, "%s: row flags %#x, reference %#x", what,
          dp_tile_row_flags(p, u, h, 0), want);
    CHECK(dp_tile_row_flags(p, u, h, 1) == want, "%s: lazy row flags %#x, reference %#x", what,
          dp_tile_row_flags(p, u, h, 1), want);
    unsigned seg = 0; /* the GPU's segments of a row (block_flag_pass) */
    const int lb = dp_log2(p->B), lim_cells = dp_cells(p->dim, p->B);
    const float lim = dp_flag_limit(p, h);
    for (int c = 0; c < lim_cells; c += DP_SEG_FLAGS) {
        int x, y, z;
        dp_cell_xyz(c, p->B, lb, &x, &y, &z);
        seg |= dp_seg_flags(p, u, x, y, z, lim);
    }
    CHECK(seg == want, "%s: segment flags %#x, reference %#x", what, seg, want);
    static const int seg_strides[] = { 1, 32, 3, 256 }; /* a thread, a warp's lanes, odd, a block */
    for (int k = 0; k < 4; ++k) {
        unsigned m = 0;
        for (int first = 0; first < seg_strides[k]; ++first) m |= dp_tile_seg_flags(p, u, lim, first, seg_strides[k]);
        CHECK(m == want, "%s: segment flags at stride %d %#x, reference %#x", what, seg_strides[k], m, want);
    }
    static const int strides[] = { 32, 7, 256 };
    for (int k = 0; k < 3; ++k) {
        unsigned m = 0;
        int total = 0;
        for (int first = 0; first < strides[k]; ++first) {
            m |= dp_tile_flags(p, u, h, first, strides[k], 0, &n);
            total += n;
        }
        CHECK(m == want && total == want_n, "%s: stride %d gives %#x (%d cells), reference %#x (%d)", what,
              strides[k], m, total, want, want_n);
    }
}

/* dp_jump_fold: the GPU's fmaxf(jmax, dj) and the CPU's select give the same bits for every jump dj
 * (a fabsf: never -0, any NaN, infinity, subnormal) and every running maximum jmax the folds make
 * (+0, then jumps that are not NaN). */
static void test_jump_fold(void)
{
    const float js[] = { 0.0f, 1e-45f, 1e-40f, 1.17549435e-38f, 0.5f, 0.50000006f, 1.0f, 3.0e38f, FLT_MAX, INFINITY, NAN };
    const int n = (int)(sizeof js / sizeof js[0]);
    int bad = 0;
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
            const float dj = fabsf(a % 2 ? -js[a] : js[a]), jmax = js[b];
            if (isnan(jmax)) continue; /* never a running maximum */
            const float gpu = fmaxf(jmax, dj), cpu = dp_jump_fold(dj, jmax);
            bad += memcmp(&gpu, &cpu, sizeof gpu) != 0;
        }
    CHECK(bad == 0, "dp_jump_fold: fmaxf and the select differ on %d pairs", bad);
    CHECK(dp_jump_max(-0.0f, 0.0f, 0.0f) == 0.0f && !signbit(dp_jump_max(-0.0f, 0.0f, 0.0f)),
          "a jump of -0 folds to +0");
}

/* dp_flag_limit: for every float j, j > dp_flag_limit(p, h) exactly when (double)j > threshold * h
 * (the criterion as written before the limit: a double comparison per cell), on limits of every
 * magnitude and the floats around them: exact floats, values between two floats, beyond the float
 * range, subnormal, zero of both signs, infinities and NaN. */
static void test_flag_limit(void)
{
    dp_params p;
    memset(&p, 0, sizeof p);
    p.crit = DP_CRIT_GRADIENT;
    double L[64];
    int nl = 0;
    static const double fixed[] = { 0.0, -0.0, 1.0, 0.1, -0.1, 3.5, 1e-40, 1e-46, -1e-46, 3.4028234663852886e38,
                                    3.4028235e38, 3.5e38, -3.5e38, 1e300, INFINITY, -INFINITY, NAN, 0.5000000298023224 };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) L[nl++] = fixed[i];
    unsigned seed = 4242u;
    while (nl < 64) { /* random magnitudes, mostly between two floats */
        seed = seed * 1103515245u + 12345u;
        const double m = (double)(seed >> 8) / 16777216.0 + 0.5;
        seed = seed * 1103515245u + 12345u;
        L[nl++] = (seed & 1 ? -1 : 1) * ldexp(m, (int)(seed >> 8) % 200 - 120);
    }
    int bad = 0;
    for (int k = 0; k < nl; ++k) {
        p.threshold = L[k];
        const float lim = dp_flag_limit(&p, 1.0);
        float js[16] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, FLT_MAX };
        int nj = 7;
        const float f = (float)L[k];
        js[nj++] = f;
        js[nj++] = nextafterf(f, INFINITY);
        js[nj++] = nextafterf(f, -INFINITY);
        js[nj++] = nextafterf(nextafterf(f, INFINITY), INFINITY);
        js[nj++] = lim;
        js[nj++] = nextafterf(lim, INFINITY);
        js[nj++] = nextafterf(lim, -INFINITY);
        for (int j = 0; j < nj; ++j) bad += ((double)js[j] > L[k] * 1.0) != dp_jump_flagged_at(js[j], lim);
    }
    CHECK(bad == 0, "j > dp_flag_limit exactly when (double)j > threshold * h (%d of %d limits' cases differ)", bad,
          nl * 14);
    p.crit = DP_CRIT_JUMP;
    p.threshold_f = 0.25f;
    CHECK(dp_flag_limit(&p, 0.5) == 0.25f, "criterion = jump: the limit is threshold_f");
}

/* The row flags of the CPU engines against the reference on every tile size and criterion, with
 * values a vector unit could get wrong: NaN (its jumps are never the largest), infinities (inf - inf
 * is NaN), signed zeros, subnormals, jumps just above and at the threshold. */
static void test_row_flags(int dim)
{
    static const float odd[] = { NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f, 0.5f, 0.50000006f,
                                 -0.5f, 1.0f, 3.0e38f, -3.0e38f };
    const int nodd = (int)(sizeof odd / sizeof odd[0]);
    dp_params p;
    memset(&p, 0, sizeof p);
    p.dim = dim;
    p.nf = 1;
    p.threshold = 0.5;
    p.threshold_f = 0.5f;
    p.h0 = 1.0;
    unsigned seed = 777u;
    for (int B = 4; B <= 32; B *= 2) {
        p.B = B;
        const int cells = dp_cells(dim, B);
        float *u = malloc(sizeof(float) * (size_t)cells);
        for (int trial = 0; trial < 24; ++trial) {
            /* sparse odd values over a smooth ramp: few octants flagged, so each flag counts */
            for (int c = 0; c < cells; ++c) {
                seed = seed * 1103515245u + 12345u;
                const unsigned r = seed >> 8;
                u[c] = r % 97 < (unsigned)(trial % 4) ? odd[r % (unsigned)nodd] : 0.001f * (float)(c % B);
            }
            p.crit = trial % 2 ? DP_CRIT_GRADIENT : DP_CRIT_JUMP;
            char what[64];
            snprintf(what, sizeof what, "%dD B=%d trial %d", dim, B, trial);
            check_tile_flags(&p, u, trial % 3 ? 1.0 : 0.25, what);
            /* the prolongation's rows of bricks on the same values, and on values that change along every
               axis (random, some odd: slopes on all three axes, so the order of their sum shows): the
               bricks' bits and dp_prolong's, NaN included */
            if (trial % 2) {
                for (int c = 0; c < cells; ++c) {
                    seed = seed * 1103515245u + 12345u;
                    const unsigned r = seed >> 8;
                    u[c] = r % 89 == 0 ? odd[r % (unsigned)nodd] : (float)(r % 20011u) * 1.37e-4f - 1.3f;
                }
            }
            float *a = malloc(sizeof(float) * (size_t)cells), *b = malloc(sizeof(float) * (size_t)cells);
            int same = 1, ref_same = 1;
            for (int o = 0; o < (1 << dim); ++o) {
                for (int Z = 0; Z < (dim == 3 ? B / 2 : 1); ++Z)
                    for (int Y = 0; Y < B / 2; ++Y) {
                        dp_prolong_row(dim, B, u, o, Y, Z, a);
                        for (int X = 0; X < B / 2; ++X) {
                            float br[8];
                            dp_prolong_brick(dim, B, u, o, X, Y, Z, br);
                            for (int s = 0; s < (1 << dim); ++s)
                                b[(2 * X + (s & 1)) + B * ((2 * Y + (s >> 1 & 1)) + B * (2 * Z + (s >> 2 & 1)))] = br[s];
                        }
                    }
                same &= memcmp(a, b, sizeof(float) * (size_t)cells) == 0;
                /* and the independent per-cell reference, dp_prolong (not built on dp_prolong_child) */
                for (int z = 0; z < (dim == 3 ? B : 1); ++z)
                    for (int y = 0; y < B; ++y)
                        for (int x = 0; x < B; ++x) {
                            const float ref = dp_prolong(dim, B, u, o, x, y, z);
                            ref_same &= memcmp(&ref, &a[x + B * (y + B * z)], sizeof ref) == 0;
                        }
            }
            CHECK(same, "%s: dp_prolong_row gives dp_prolong_brick's bits in every octant", what);
            CHECK(ref_same, "%s: dp_prolong_row gives dp_prolong's bits, cell by cell, in every octant", what);
            free(a);
            free(b);
        }
        free(u);
    }
}

/* Every jump on its own: a step across each plane of cells on each axis (a loop that takes a jump
 * once for the two cells it lies between must still flag both sides) and a spike at every cell (its
 * jumps to each face neighbour), so no neighbour a flag loop forgets hides among other flagged
 * cells, as it can in random tiles. */
static void test_flag_isolated(int dim)
{
    dp_params p;
    memset(&p, 0, sizeof p);
    p.dim = dim;
    p.nf = 1;
    p.crit = DP_CRIT_JUMP;
    p.threshold = 0.5;
    p.threshold_f = 0.5f;
    p.h0 = 1.0;
    for (int B = 4; B <= (dim == 3 ? 8 : 16); B *= 2) {
        p.B = B;
        const int cells = dp_cells(dim, B), lb = dp_log2(B);
        float *u = malloc(sizeof(float) * (size_t)cells);
        char what[64];
        for (int a = 0; a < dim; ++a)
            for (int k = 0; k + 1 < B; ++k) { /* the step between coordinate k and k + 1 on axis a */
                for (int c = 0; c < cells; ++c) {
                    int xyz[3];
                    dp_cell_xyz(c, B, lb, &xyz[0], &xyz[1], &xyz[2]);
                    u[c] = xyz[a] > k ? 1.0f : 0.0f;
                }
                snprintf(what, sizeof what, "%dD B=%d step on axis %d after %d", dim, B, a, k);
                check_tile_flags(&p, u, 1.0, what);
            }
        for (int c = 0; c < cells; ++c) {
            for (int i = 0; i < cells; ++i) u[i] = i == c ? 1.0f : 0.0f;
            snprintf(what, sizeof what, "%dD B=%d spike at cell %d", dim, B, c);
            check_tile_flags(&p, u, 1.0, what);
        }
        free(u);
    }
}

static void test_criterion_prolong(int dim)
{
    dp_params p;
    memset(&p, 0, sizeof p);
    p.dim = dim;
    p.B = 8;
    p.nf = 1;
    p.crit = DP_CRIT_JUMP;
    p.threshold = 0.5;
    p.threshold_f = 0.5f;
    p.h0 = 1.0 / 8;
    const int B = 8, cells = dp_cells(dim, B), nz = dim == 3 ? B : 1;
    float *u = malloc(sizeof(float) * cells);
    /* a step at x = 6 | 7: only octants with x in the upper half are flagged */
    for (int c = 0; c < cells; ++c) u[c] = (c % B) >= 7 ? 2.0f : (float)(c % B) * 0.01f;
    int nflagged;
    const unsigned mask = ref_octant_flags(&p, u, p.h0, &nflagged);
    CHECK(mask == (dim == 2 ? 0xAu : 0xAAu), "%dD step flags octants %#x", dim, mask);
    CHECK(nflagged == 2 * cells / B, "%dD step flags the %d cells beside it: %d", dim, 2 * cells / B, nflagged);
    check_tile_flags(&p, u, p.h0, "step");
    p.crit = DP_CRIT_GRADIENT;
    p.threshold = 0.5 / p.h0 * 0.999; /* jump 1.93 over h: flagged; smooth 0.01/h = 0.08: not */
    const unsigned mg = ref_octant_flags(&p, u, p.h0, &nflagged);
    CHECK(mg == mask, "gradient criterion agrees on the step: %#x", mg);
    check_tile_flags(&p, u, p.h0, "step, gradient");
    /* scattered jumps: octants flagged by one cell or by many, some not at all */
    p.crit = DP_CRIT_JUMP;
    for (int c = 0; c < cells; ++c) u[c] = (c * 37 % 101 == 0 && (c % B) < B / 2) ? 5.0f : 0.0f;
    check_tile_flags(&p, u, p.h0, "scattered");
    for (int c = 0; c < cells; ++c) u[c] = (float)(c % 5);
    check_tile_flags(&p, u, p.h0, "everywhere");
    for (int c = 0; c < cells; ++c) u[c] = 1.0f;
    check_tile_flags(&p, u, p.h0, "nowhere");

    /* prolongation is conservative: children of each parent cell average back to it */
    for (int c = 0; c < cells; ++c) u[c] = (float)sin(0.37 * c) + (c % 3 == 0 ? 1.5f : 0.0f);
    double worst = 0.0;
    for (int o = 0; o < (1 << dim); ++o) {
        float *child = malloc(sizeof(float) * cells);
        for (int z = 0; z < nz; ++z)
            for (int y = 0; y < B; ++y)
                for (int x = 0; x < B; ++x) {
                    child[x + B * (y + B * z)] = dp_prolong(dim, B, u, o, x, y, z);
                    const float *up[DP_MAX_FIELDS] = { u };
                    const int32_t tc[3] = { 0, 0, 0 };
                    float v[DP_MAX_FIELDS];
                    p.fill = DP_FILL_PROLONG;
                    dp_fill_cell(&p, 1, tc, up, o, x, y, z, v);
                    CHECK(v[0] == child[x + B * (y + B * z)], "dp_fill_cell prolongs as dp_prolong");
                }
        /* the bricks the engines fill by: the same bits as dp_prolong, cell by cell */
        for (int Z = 0; Z < (dim == 3 ? B / 2 : 1); ++Z)
            for (int Y = 0; Y < B / 2; ++Y)
                for (int X = 0; X < B / 2; ++X) {
                    float br[8];
                    dp_prolong_brick(dim, B, u, o, X, Y, Z, br);
                    for (int b = 0; b < (1 << dim); ++b) {
                        const int c = (2 * X + (b & 1)) + B * ((2 * Y + (b >> 1 & 1)) + B * (2 * Z + (b >> 2 & 1)));
                        CHECK(memcmp(&br[b], &child[c], sizeof(float)) == 0, "%dD brick cell %d of octant %d", dim, c, o);
                    }
                }
        /* the rows of bricks tile_fill prolongs by: the same bits, every cell written */
        {
            float *rows = malloc(sizeof(float) * cells);
            for (int c = 0; c < cells; ++c) rows[c] = -9.0f;
            for (int Z = 0; Z < (dim == 3 ? B / 2 : 1); ++Z)
                for (int Y = 0; Y < B / 2; ++Y) dp_prolong_row(dim, B, u, o, Y, Z, rows);
            CHECK(memcmp(rows, child, sizeof(float) * cells) == 0, "%dD rows of bricks of octant %d", dim, o);
            free(rows);
        }
        for (int z = 0; z < nz; z += 2)
            for (int y = 0; y < B; y += 2)
                for (int x = 0; x < B; x += 2) {
                    double s = 0.0;
                    for (int k = 0; k < (dim == 3 ? 2 : 1); ++k)
                        for (int j = 0; j < 2; ++j)
                            for (int i = 0; i < 2; ++i) s += child[(x + i) + B * ((y + j) + B * (z + k))];
                    s /= 1 << dim;
                    const int px = (o & 1) * B / 2 + x / 2, py = (o >> 1 & 1) * B / 2 + y / 2,
                              pz = dim == 3 ? (o >> 2 & 1) * B / 2 + z / 2 : 0;
                    const double pv = u[px + B * (py + B * pz)];
                    const double rel = fabs(s - pv) / (fabs(pv) + 1e-30);
                    if (rel > worst) worst = rel;
                }
        free(child);
    }
    CHECK(worst < 1e-6, "%dD prolongation conserves to %.3g", dim, worst);
    free(u);
}

static void test_model(void)
{
    dp_params p;
    memset(&p, 0, sizeof p);
    p.dim = 2;
    p.B = 4;
    p.nf = 2;
    p.h0 = 0.25;
    p.nobj = 2;
    p.obj[0].kind = DP_OBJ_BOX;
    p.obj[0].center[0] = p.obj[0].center[1] = 0.5;
    p.obj[0].radius[0] = p.obj[0].radius[1] = p.obj[0].radius[2] = 0.3;
    p.obj[0].inside[0] = 3.0;
    p.obj[0].outside[0] = 1.0;
    p.obj[0].inside[1] = p.obj[0].outside[1] = 7.0;
    p.obj[1].kind = DP_OBJ_GAUSSIAN;
    p.obj[1].center[0] = 0.125;
    p.obj[1].center[1] = 0.125;
    p.obj[1].radius[0] = p.obj[1].radius[1] = p.obj[1].radius[2] = 0.5;
    p.obj[1].inside[0] = 2.0;
    /* cell (1,1) centre (0.375, 0.375) is inside the box; cell (0,0) centre (0.125,0.125) is the
       gaussian's peak and outside the box */
    CHECK(dp_model_cell(&p, 0, 0, 0, 0, 0, 0, 0, 0) == 3.0f, "peak + box outside = %g",
          dp_model_cell(&p, 0, 0, 0, 0, 0, 0, 0, 0));
    const float v = dp_model_cell(&p, 0, 0, 0, 0, 0, 1, 1, 0);
    CHECK(fabsf(v - (3.0f + 2.0f * (float)exp(-0.5))) < 1e-6f, "box inside + gaussian = %g", v);
    CHECK(dp_model_cell(&p, 1, 0, 0, 0, 0, 3, 3, 0) == 7.0f, "second field");
    /* dp_fill_cell samples the model for fill = model, and without a parent for fill = prolong */
    const float *up[DP_MAX_FIELDS] = { NULL };
    const int32_t tc[3] = { 1, 0, 0 };
    float got[DP_MAX_FIELDS], want[DP_MAX_FIELDS];
    dp_model_cells(&p, 2, tc[0], tc[1], tc[2], 3, 1, 0, want);
    for (int fill = DP_FILL_PROLONG; fill <= DP_FILL_MODEL; ++fill) {
        p.fill = fill;
        dp_fill_cell(&p, 2, tc, fill == DP_FILL_MODEL ? up : NULL, 0, 3, 1, 0, got);
        CHECK(got[0] == want[0] && got[1] == want[1], "dp_fill_cell samples the model (fill %d)", fill);
    }
    p.obj[0].kind = DP_OBJ_ELLIPSOID;
    CHECK(dp_model_cell(&p, 0, 0, 0, 0, 0, 0, 0, 0) == 3.0f, "ellipsoid outside");

    /* a tile's model table gives every cell the bits of the per-cell reference: three kinds of
       object, off-centre tiles on deep levels, 2D and 3D */
    for (int dim = 2; dim <= 3; ++dim) {
        p.dim = dim;
        p.B = 8;
        p.nobj = 3;
        p.origin[0] = -0.3;
        p.origin[1] = 0.1;
        p.origin[2] = 0.7;
        p.h0 = 0.1 / 3.0;
        p.obj[2] = p.obj[1];
        p.obj[2].kind = DP_OBJ_ELLIPSOID;
        p.obj[2].center[2] = 0.9;
        p.obj[2].radius[0] = 0.21;
        p.obj[1].center[2] = 0.8;
        p.obj[0].center[2] = 0.75;
        double T[DP_MAX_OBJECTS * 3 * 32];
        int same = 1;
        for (int level = 0; level <= 9; level += 3) {
            const int32_t c[3] = { 5 << level >> 1, 3 << level >> 1, dim == 3 ? 7 << level >> 2 : 0 };
            const double h = dp_spacing(&p, level);
            for (int e = 0; e < dp_model_table_size(&p); ++e) T[e] = dp_model_table_entry(&p, c, h, e);
            double T2[DP_MAX_OBJECTS * 3 * 32];
            dp_model_table(&p, c, h, T2);
            same &= memcmp(T, T2, sizeof(double) * (size_t)dp_model_table_size(&p)) == 0;
            for (int z = 0; z < (dim == 3 ? p.B : 1); ++z)
                for (int y = 0; y < p.B; ++y)
                    for (int x = 0; x < p.B; ++x) {
                        float a[DP_MAX_FIELDS], b[DP_MAX_FIELDS];
                        dp_model_cells(&p, level, c[0], c[1], c[2], x, y, z, a);
                        dp_model_cells_tab(&p, T, x, y, z, b);
                        same &= memcmp(a, b, sizeof(float) * (size_t)p.nf) == 0;
                    }
        }
        CHECK(same, "%dD: dp_model_table gives dp_model_table_entry's bits, dp_model_cells_tab dp_model_cells'", dim);
    }

    /* dp_model_row (tile_fill's model path) gives every cell of its row the per-cell reference's
       bits: every tile size, 1 to 8 fields, up to DP_MAX_OBJECTS objects of mixed kinds (outsides
       and insides of both signs, several objects over one cell), whole rows and parts of rows,
       cells the call does not own left as they were */
    {
        unsigned seed = 12345u;
        int same = 1, untouched = 1, rows = 0, same_seg = 1, segs = 0, same_seg2 = 1, segs2 = 0;
        for (int dim = 2; dim <= 3; ++dim)
            for (int B = 4; B <= 32; B *= 2)
                for (int nobj = 1; nobj <= DP_MAX_OBJECTS; nobj += 5)
                for (int mode = 0; mode < 2; ++mode) {
                    p.dim = dim;
                    p.B = B;
                    p.nf = 1 + (nobj + B) % DP_MAX_FIELDS;
                    p.nobj = nobj;
                    for (int o = 0; o < nobj; ++o) {
                        dp_object *ob = &p.obj[o];
                        ob->kind = (o + dim) % 3;
                        for (int a = 0; a < 3; ++a) {
                            seed = seed * 1103515245u + 12345u;
                            ob->center[a] = (double)(seed >> 8) / 16777216.0;
                            seed = seed * 1103515245u + 12345u;
                            ob->radius[a] = 0.05 + (double)(seed >> 8) / 16777216.0 * 0.4;
                        }
                        for (int f = 0; f < DP_MAX_FIELDS; ++f) {
                            if (mode == 0) { /* moderate values, a -0.0 outside among them */
                                ob->inside[f] = 1.0 + 0.37 * o - 0.11 * f;
                                ob->outside[f] = (o + f) % 3 == 0 ? -0.0 : 0.01 * (f - o);
                            } else { /* pairs of objects whose outside values, +-1e15, cancel: the double sum's
                                        order shows in the float written (a reassociated sum fails here) */
                                const double big = 1e15 * (1.0 + 0.125 * (o / 2));
                                ob->outside[f] = o % 2 ? -big : big;
                                ob->inside[f] = ob->outside[f] + 0.37 + 0.01 * f;
                            }
                        }
                    }
                    const int level = 2 + B % 5;
                    const int32_t c[3] = { 3, 2, dim == 3 ? 1 : 0 };
                    const double h = dp_spacing(&p, level);
                    double T[DP_MAX_OBJECTS * 3 * 32];
                    for (int e = 0; e < dp_model_table_size(&p); ++e) T[e] = dp_model_table_entry(&p, c, h, e);
                    double T2[DP_MAX_OBJECTS * 3 * 32];
                    dp_model_table(&p, c, h, T2); /* tile_fill's table: the same bits */
                    same &= memcmp(T, T2, sizeof(double) * (size_t)dp_model_table_size(&p)) == 0;
                    float row[DP_MAX_FIELDS][DP_ROW_MAX + 2];
                    float *dst[DP_MAX_FIELDS];
                    for (int f = 0; f < DP_MAX_FIELDS; ++f) dst[f] = row[f];
                    for (int z = 0; z < (dim == 3 ? B : 1); z += dim == 3 ? 3 : 1)
                        for (int y = 0; y < B; y += 3)
                            for (int part = 0; part < 3; ++part) {
                                /* the whole row, its first cell, its upper half */
                                const int x0 = part == 2 ? B / 2 : 0, n = part == 0 ? B : part == 1 ? 1 : B / 2;
                                for (int f = 0; f < DP_MAX_FIELDS; ++f)
                                    for (int i = 0; i < DP_ROW_MAX + 2; ++i) row[f][i] = -7.0f;
                                dp_model_row(&p, T, x0, n, y, z, dst, 1);
                                ++rows;
                                /* the GPU's segments of the row, field by field: dp_model_row's bits */
                                for (int xs = (x0 + DP_SEG - 1) & ~(DP_SEG - 1); xs + DP_SEG <= x0 + n; xs += DP_SEG)
                                    for (int f = 0; f < p.nf; ++f) {
                                        float seg[DP_SEG], segy[DP_SEG], s0[DP_SEG], s1[DP_SEG];
                                        dp_model_seg(&p, T, xs, y, z, f, seg);
                                        dp_model_seg_yz(&p, T, xs, y, z, f, 1, segy); /* a box by its y and z test */
                                        ++segs;
                                        same_seg &= memcmp(seg, &row[f][1 + xs - x0], sizeof seg) == 0 &&
                                                    memcmp(segy, &row[f][1 + xs - x0], sizeof segy) == 0;
                                        if (f + 1 < p.nf) { /* the pair of fields f, f + 1 */
                                            dp_model_seg2(&p, T, xs, y, z, f, s0, s1);
                                            ++segs2;
                                            same_seg2 &= memcmp(s0, &row[f][1 + xs - x0], sizeof s0) == 0 &&
                                                         memcmp(s1, &row[f + 1][1 + xs - x0], sizeof s1) == 0;
                                        }
                                    }
                                for (int i = 0; i < n; ++i) {
                                    float want[DP_MAX_FIELDS];
                                    dp_model_cells(&p, level, c[0], c[1], c[2], x0 + i, y, z, want);
                                    for (int f = 0; f < p.nf; ++f)
                                        same &= memcmp(&want[f], &row[f][1 + i], sizeof(float)) == 0;
                                }
                                for (int f = 0; f < DP_MAX_FIELDS; ++f)
                                    for (int i = 0; i < DP_ROW_MAX + 2; ++i)
                                        if (f >= p.nf || i == 0 || i > n) untouched &= row[f][i] == -7.0f;
                            }
                }
        CHECK(same, "dp_model_table and dp_model_row give the per-entry and per-cell references' bits (%d rows)", rows);
        CHECK(untouched, "dp_model_row writes only its n cells of its nf fields");
        CHECK(same_seg && segs > 0, "dp_model_seg gives dp_model_row's bits, either box test (%d segments)", segs);
        CHECK(same_seg2 && segs2 > 0, "dp_model_seg2 gives dp_model_row's bits for both fields (%d segments)", segs2);
    }

    /* dp_shape_run's two box tests (yz 1: y and z once, then x; 0: dp_shape_v's largest value) give the
       same shapes for every axis value a table can hold, the edges at 1 and the zeros of both signs among them */
    {
        const double vals[] = { 0.0, -0.0, 0.25, nextafter(1.0, 0.0), 1.0, nextafter(1.0, 2.0), 1.5, 1e300, INFINITY };
        const int nv = (int)(sizeof vals / sizeof vals[0]);
        int same = 1, runs = 0;
        for (int dim = 2; dim <= 3; ++dim)
            for (int a = 0; a < nv; ++a)
                for (int b = 0; b < nv; ++b) {
                    double s0[sizeof vals / sizeof vals[0]], s1[sizeof vals / sizeof vals[0]];
                    dp_shape_run(dim, DP_OBJ_BOX, vals, nv, vals[a], vals[b], 0, s0);
                    dp_shape_run(dim, DP_OBJ_BOX, vals, nv, vals[a], vals[b], 1, s1);
                    same &= memcmp(s0, s1, sizeof s0) == 0;
                    ++runs;
                }
        CHECK(same, "dp_shape_run's box tests agree on the edge values (%d runs)", runs);
    }

    /* a gaussian is the product of its axis factors exp(-t_a^2), the exp of the sum to round-off (exp(-q) itself is only as exact as q, q x 1e-16);
       ellipsoid and box as before the axis values: the sum of t_a^2 against 1, the largest t_a */
    {
        dp_object g;
        memset(&g, 0, sizeof g);
        g.kind = DP_OBJ_GAUSSIAN;
        g.center[0] = 0.3, g.center[1] = -0.2, g.center[2] = 0.45;
        g.radius[0] = 0.12, g.radius[1] = 0.3, g.radius[2] = 0.07;
        double worst = 0.0;
        int exact = 1;
        for (int i = 0; i < 2000; ++i) {
            const double x[3] = { -0.5 + 0.0011 * i, 0.37 - 0.0007 * i, 0.2 + 0.00031 * i };
            double t[3], q = 0.0;
            for (int a = 0; a < 3; ++a) t[a] = fabs((x[a] - g.center[a]) / g.radius[a]), q += t[a] * t[a];
            const double got = dp_shape(3, &g, x), ref = exp(-q);
            exact &= got == dp_exp(-t[0] * t[0]) * dp_exp(-t[1] * t[1]) * dp_exp(-t[2] * t[2]);
            if (ref > 1e-300 && fabs(got - ref) / ref > worst) worst = fabs(got - ref) / ref;
        }
        CHECK(exact, "the gaussian is the product of its axis factors, in axis order");
        CHECK(worst < 1e-13, "the separated gaussian within %.3g (relative) of exp(-q): far below float's 6e-8", worst);
        g.kind = DP_OBJ_ELLIPSOID;
        const double in[3] = { 0.3 + 0.12 * 0.6, -0.2 + 0.3 * 0.6, 0.45 + 0.07 * 0.5 }; /* q = 0.97 */
        const double out[3] = { 0.3 + 0.12 * 0.6, -0.2 + 0.3 * 0.6, 0.45 + 0.07 * 0.53 }; /* q = 1.0009 */
        CHECK(dp_shape(3, &g, in) == 1.0 && dp_shape(3, &g, out) == 0.0, "ellipsoid: sum of t^2 against 1");
        g.kind = DP_OBJ_BOX;
        const double edge[3] = { 0.3 + 0.12 * 0.99, -0.2 - 0.3 * 0.99, 0.45 + 0.07 * 0.99 };
        const double past[3] = { 0.3 + 0.12 * 0.99, -0.2 - 0.3 * 1.01, 0.45 };
        CHECK(dp_shape(3, &g, edge) == 1.0 && dp_shape(3, &g, past) == 0.0, "box: the largest t against 1");
    }
}

/* Time steps: an object moves by velocity x t; restriction inverts prolongation to half an ulp and
 * is exact on a constant; the regrid's per-octant decision and the old child's index. */
static void test_steps(int dim)
{
    dp_params p;
    memset(&p, 0, sizeof p);
    p.dim = dim;
    p.nobj = 1;
    p.obj[0].center[0] = 0.25;
    p.obj[0].center[1] = 0.5;
    p.obj[0].velocity[0] = 0.5;
    p.obj[0].velocity[1] = -0.125;
    dp_params q;
    dp_params_at(&p, 0.5, &q);
    CHECK(q.obj[0].center[0] == 0.5 && q.obj[0].center[1] == 0.4375 && q.obj[0].center[2] == 0.0,
          "dp_params_at moves the centre: %g %g", q.obj[0].center[0], q.obj[0].center[1]);
    CHECK(p.obj[0].center[0] == 0.25 && q.obj[0].velocity[0] == 0.5, "the deck's object is not moved");
    dp_params_at(&p, 0.0, &q);
    CHECK(!memcmp(&p, &q, sizeof p), "time 0: the deck's parameters");

    const int B = 8, cells = dp_cells(dim, B), nz = dim == 3 ? B : 1, hb = B / 2;
    float *u = malloc(sizeof(float) * cells), *child = malloc(sizeof(float) * cells);
    for (int c = 0; c < cells; ++c) u[c] = (float)sin(0.37 * c) * 3.0f + (c % 3 == 0 ? 1.5f : 0.0f);
    double worst = 0.0;
    for (int o = 0; o < (1 << dim); ++o) {
        for (int z = 0; z < nz; ++z)
            for (int y = 0; y < B; ++y)
                for (int x = 0; x < B; ++x) child[x + B * (y + B * z)] = dp_prolong(dim, B, u, o, x, y, z);
        for (int Z = 0; Z < (dim == 3 ? hb : 1); ++Z)
            for (int Y = 0; Y < hb; ++Y)
                for (int X = 0; X < hb; ++X) {
                    const int px = (o & 1) * hb + X, py = (o >> 1 & 1) * hb + Y, pz = dim == 3 ? (o >> 2 & 1) * hb + Z : 0;
                    const double pv = u[px + B * (py + B * pz)], r = dp_restrict_cell(dim, B, child, X, Y, Z);
                    double a = 0.0; /* relative to the values involved, as validation's conservation check */
                    for (int k = 0; k < (1 << dim); ++k)
                        a += fabs(child[(2 * X + (k & 1)) + B * ((2 * Y + (k >> 1 & 1)) + B * (dim == 3 ? 2 * Z + (k >> 2 & 1) : 0))]);
                    const double rel = fabs(r - pv) / (fabs(pv) + a / (1 << dim));
                    if (rel > worst) worst = rel;
                }
    }
    CHECK(worst <= 1e-7, "%dD restriction of a prolongation gives the parent back to %.3g", dim, worst);
    for (int c = 0; c < cells; ++c) child[c] = 0.1f;
    CHECK(dp_restrict_cell(dim, B, child, 1, 2, dim == 3 ? 3 : 0) == 0.1f, "restriction of a constant is exact");
    for (int c = 0; c < cells; ++c) child[c] = (float)c;
    /* parent cell (1,2,1) of the octant (z 0 in 2D): the mean of child cells x 2..3, y 4..5 (z 2..3) */
    double s = 0.0;
    for (int k = 0; k < (1 << dim); ++k)
        s += (2 + (k & 1)) + B * ((4 + (k >> 1 & 1)) + B * (dim == 3 ? 2 + (k >> 2 & 1) : 0));
    CHECK(dp_restrict_cell(dim, B, child, 1, 2, dim == 3 ? 1 : 0) == (float)(s / (1 << dim)),
          "%dD restriction averages its %d cells", dim, 1 << dim);
    free(u);
    free(child);

    unsigned keep, add, drop;
    dp_regrid_octants(0xB /* 1011 */, 0x6 /* 0110 */, &keep, &add, &drop);
    CHECK(keep == 0x2 && add == 0x9 && drop == 0x4, "regrid octants keep %#x add %#x drop %#x", keep, add, drop);
    CHECK(dp_child_index(10, 0xB2 /* octants 1,4,5,7 */, 5) == 12 && dp_child_index(10, 0xB2, 1) == 10 &&
              dp_child_index(10, 0xB2, 7) == 13,
          "old child index from the parent's first child and childmask");
}

/* dp_model_entry_index inverts k = (o dim + a) B + x for every table layout of 2 and 3 dimensions,
 * tile sizes 4 to 32 and 1 to DP_MAX_OBJECTS objects, as dp_model_table_entry divides. */
static void test_entry_index(void)
{
    int bad = 0;
    long long checked = 0;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lb = 2; lb <= 5; ++lb)
            for (int nobj = 1; nobj <= DP_MAX_OBJECTS; ++nobj) {
                dp_params p;
                memset(&p, 0, sizeof p);
                p.dim = dim;
                p.B = 1 << lb;
                p.nobj = nobj;
                for (int k = 0; k < dp_model_table_size(&p); ++k) {
                    int o, a, x;
                    dp_model_entry_index(&p, (uint32_t)k, lb, &o, &a, &x);
                    bad += !(o == k / (p.B * dim) && a == (k / p.B) % dim && x == k % p.B);
                    ++checked;
                }
            }
    CHECK(bad == 0 && checked > 0, "dp_model_entry_index gives dp_model_table_entry's indices (%d of %lld differ)", bad,
          checked);
}

int main(void)
{
    test_steps(2);
    test_steps(3);
    test_morton();
    test_exp();
    test_criterion_prolong(2);
    test_flag_isolated(2);
    test_flag_isolated(3);
    test_criterion_prolong(3);
    test_row_flags(2);
    test_row_flags(3);
    test_flag_limit();
    test_jump_fold();
    test_model();
    test_entry_index();
    return TEST_DONE();
}
