/* test_capacity.c - the tile store's capacity (src/capacity.c) from injected memory figures: the
 * tile bound (with the frontier's children counted), the fit search, what limits a capacity and how
 * the messages name it, the host's memory figure; and the transfer helpers (src/xfer.c: the parallel
 * copy, the progress lines). No device needed: the GPU variants' capacity is the same cap_compute
 * with the device's figures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/capacity.h"
#include "src/xfer.h"
#include "tests/test_util.h"

/* A mesh header with level counts only (the capacity reads no tile array). */
static mesh_t header(int dim, int B, int nf, int rx, int ry, int rz, const long long *per_level, int nlevels)
{
    mesh_t m;
    memset(&m, 0, sizeof m);
    m.dim = dim;
    m.B = B;
    m.nf = nf;
    m.root[0] = rx;
    m.root[1] = ry;
    m.root[2] = rz;
    m.nlevels = nlevels;
    for (int L = 0; L < nlevels; ++L) m.level_start[L + 1] = m.level_start[L] + per_level[L];
    m.ntiles = m.cap = m.level_start[nlevels];
    return m;
}

static dp_params params(int dim, int B, int nf, int max_level)
{
    dp_params p;
    memset(&p, 0, sizeof p);
    p.dim = dim;
    p.B = B;
    p.nf = nf;
    p.max_level = max_level;
    return p;
}

/* need(c) = fixed + c * per */
typedef struct {
    double fixed, per;
} lin_t;
static double lin_need(long long c, const void *ctx)
{
    const lin_t *l = ctx;
    return l->fixed + (double)c * l->per;
}

static cap_memory_t memory(const char *name, double free_bytes, int share, const lin_t *l)
{
    cap_memory_t m;
    memset(&m, 0, sizeof m);
    m.name = name;
    m.state = strcmp(name, "device") == 0 ? "free" : "available";
    m.free_bytes = free_bytes;
    m.share = share;
    m.need = lin_need;
    m.ctx = l;
    return m;
}

static void test_bound(void)
{
    /* a level-0 mesh: every tile of every level of the domain */
    const long long roots256[] = { 256 };
    mesh_t m = header(2, 16, 1, 16, 16, 1, roots256, 1);
    dp_params p = params(2, 16, 1, 9);
    long long want = 0;
    for (int L = 0; L <= 9; ++L) want += 256ll << (2 * L);
    CHECK(cap_tile_bound(&p, &m, -1) == want, "bench2d to level 9: %lld, want %lld", cap_tile_bound(&p, &m, -1), want);
    CHECK(want == 89478400ll, "bench2d's full domain to level 9 is 89478400 tiles: %lld", want);
    p.max_level = 0;
    CHECK(cap_tile_bound(&p, &m, -1) == 256, "max_level 0: the input");

    /* a restart: levels 0..2 with a frontier of 10 tiles in a 2 x 2 domain; growth 10 * 4^k until the
     * level's domain (4 * 4^L) caps it */
    const long long lv[] = { 4, 7, 10 };
    m = header(2, 8, 1, 2, 2, 1, lv, 3);
    p = params(2, 8, 1, 5);
    /* level 3: min(40, 256) = 40; level 4: min(160, 1024) = 160; level 5: min(640, 4096) = 640 */
    CHECK(cap_tile_bound(&p, &m, -1) == 21 + 40 + 160 + 640, "restart bound %lld", cap_tile_bound(&p, &m, -1));
    const long long lv2[] = { 4, 16, 64 }; /* a full frontier: the domain caps it from the start */
    m = header(2, 8, 1, 2, 2, 1, lv2, 3);
    CHECK(cap_tile_bound(&p, &m, -1) == 84 + 256 + 1024 + 4096, "full frontier %lld", cap_tile_bound(&p, &m, -1));
    /* the frontier's children known: 30 of its 64 tiles' 256 octants; then x 4 per level */
    CHECK(cap_tile_bound(&p, &m, 30) == 84 + 30 + 120 + 480, "with c1 %lld", cap_tile_bound(&p, &m, 30));
    CHECK(cap_tile_bound(&p, &m, 0) == 84, "no child: the input %lld", cap_tile_bound(&p, &m, 0));

    /* deep 3D saturates instead of overflowing */
    const long long r3[] = { 512 };
    m = header(3, 8, 1, 8, 8, 8, r3, 1);
    p = params(3, 8, 1, 23);
    CHECK(cap_tile_bound(&p, &m, -1) == (1ll << 62), "saturates at 2^62: %lld", cap_tile_bound(&p, &m, -1));
    CHECK(cap_shl(3, 61) == (1ll << 62) && cap_shl(1, 70) == (1ll << 62) && cap_shl(5, 2) == 20 &&
              cap_shl(0, 80) == 0,
          "cap_shl");
}

/* The frontier's children: flagged octants of the finest level only. Two levels: one root, four
 * children; in child 2 a jump between cells (1,1) and (2,1) (octant 0) and one across the middle
 * (cells (3,5) and (4,5): octants 2 and 3); the root's jump is not counted (not the frontier). */
static void test_frontier_children(void)
{
    const long long lv[] = { 1, 4 };
    mesh_t m = header(2, 8, 1, 1, 1, 1, lv, 2);
    CHECK(mesh_alloc(&m, 5) == 0, "alloc");
    m.ntiles = 5;
    dp_params p = params(2, 8, 1, 3);
    p.crit = DP_CRIT_JUMP;
    p.threshold = 0.1;
    p.threshold_f = 0.1f;
    p.crit_field = 0;
    p.h0 = 1.0 / 8;
    for (int t = 0; t < 5; ++t) m.level[t] = t > 0;
    float *u = m.field[0];
    u[5] = 1.0f;                  /* the root: flagged, but not on the frontier */
    u[2 * 64 + 1 + 8 * 1] = 1.0f; /* child 2, cell (1,1): a jump to its neighbours, octant 0 */
    u[2 * 64 + 4 + 8 * 5] = 1.0f; /* child 2, cell (4,5) against (3,5): octants 3 and 2 */
    CHECK(cap_frontier_children(&p, &m) == 3, "3 flagged octants on the frontier: %lld", cap_frontier_children(&p, &m));
    mesh_free(&m);
}

static void test_fit(void)
{
    lin_t l = { 100.0, 10.0 };
    CHECK(cap_fit(1000, 100.0 + 10.0 * 57, lin_need, &l) == 57, "exact fit is taken");
    CHECK(cap_fit(1000, 100.0 + 10.0 * 57 + 9.9, lin_need, &l) == 57, "partial tile is not");
    CHECK(cap_fit(1000, 1e12, lin_need, &l) == 1000, "everything fits: hi");
    CHECK(cap_fit(1000, 99.0, lin_need, &l) == -1, "not even the fixed part: -1");
    CHECK(cap_fit(1000, 100.0, lin_need, &l) == 0, "the fixed part only: 0");
    CHECK(cap_fit(1ll << 62, 1e15, lin_need, &l) == (long long)((1e15 - 100.0) / 10.0), "huge hi");
}

static void test_margin(void)
{
    const double g = CAP_GIB;
    CHECK(fabs(cap_margin(100 * g) - (g + 3 * g)) < 1.0, "1 GiB + 3%%");
    CHECK(cap_margin(1e6) == 5e5, "at most half of a small memory");
    cap_memory_t m = memory("host", 10 * g, 1, NULL);
    m.held_bytes = 2 * g;
    CHECK(fabs(cap_usable(&m) - (10 * g + 2 * g - cap_margin(10 * g))) < 1.0, "usable counts held bytes");
    m.share = 2;
    CHECK(fabs(cap_usable(&m) - (5 * g + 2 * g - cap_margin(5 * g))) < 1.0, "two ranks split the memory");
    m.free_bytes = 0;
    m.held_bytes = 0;
    CHECK(cap_usable(&m) == 0.0, "never negative");
}

static void test_compute(void)
{
    const double g = CAP_GIB;
    char advice[256];
    const long long roots[] = { 256 };
    const mesh_t m = header(2, 16, 1, 16, 16, 1, roots, 1);
    const dp_params p = params(2, 16, 1, 9);
    const long long bound = 89478400ll;
    lin_t dev = { 64.0 * 1048576, 2.0 * mesh_bytes(1.0, 2, 16, 1) }, host = { 128.0 * 1048576, 1400.0 };
    cap_memory_t mem[2] = { memory("device", 139.2 * g, 1, &dev), memory("host", 120.0 * g, 1, &host) };
    cap_t c;

    /* max_tiles: as given (at most the bound), no memory consulted */
    cap_compute(800000, &p, &m, -1, mem, 2, &c);
    CHECK(c.cap == 800000 && c.by == CAP_BY_MAX_TILES && c.bound == bound, "max_tiles: %lld", c.cap);
    CHECK(strcmp(c.limit, "max_tiles = 800000") == 0, "max_tiles limit: %s", c.limit);
    cap_advice(&c, 2605256, advice, sizeof advice);
    CHECK(strstr(advice, "set max_tiles >= 2605256") != NULL, "advice: %s", advice);
    cap_compute(1ll << 40, &p, &m, -1, mem, 2, &c);
    CHECK(c.cap == bound && c.by == CAP_BY_BOUND && strstr(c.limit, "fewer than max_tiles"), "max_tiles past the "
          "bound: %lld %s", c.cap, c.limit);

    /* max_tiles = 0 on the H200 of issue 13: bench2d to level 9 made 9.4M tiles; the old default
     * capacity of 2^21 stopped it. Now the device holds min(bound, memory) */
    cap_compute(0, &p, &m, -1, mem, 2, &c);
    const long long fit_dev = cap_fit(bound, cap_usable(&mem[0]), lin_need, &dev);
    const long long fit_host = cap_fit(bound, cap_usable(&mem[1]), lin_need, &host);
    const long long want = fit_dev < fit_host ? fit_dev : fit_host;
    CHECK(c.cap == (want < bound ? want : bound), "H200 capacity %lld, want %lld", c.cap, want);
    CHECK(c.cap > 9400000 && c.cap > (1ll << 21), "holds the 9.4M tiles of bench2d max_level=9: %lld", c.cap);
    CHECK(c.by == CAP_BY_MEMORY && c.mem == 0 && strcmp(c.mem_name, "device") == 0 && fit_dev < fit_host,
          "device-limited here (2 x 1057 bytes per tile): by %d mem %d", c.by, c.mem);
    CHECK(strstr(c.limit, "the device's 139.2 GiB free hold at most ") != NULL, "limit names the device: %s",
          c.limit);

    /* a host with less memory than the device limits it */
    mem[1].free_bytes = 60.0 * g;
    cap_compute(0, &p, &m, -1, mem, 2, &c);
    CHECK(c.by == CAP_BY_MEMORY && c.mem == 1 && strcmp(c.mem_name, "host") == 0 &&
              c.cap == cap_fit(bound, cap_usable(&mem[1]), lin_need, &host),
          "host-limited: by %d mem %d cap %lld", c.by, c.mem, c.cap);
    CHECK(strstr(c.limit, "the host's 60.0 GiB available hold at most ") != NULL, "limit names the host: %s",
          c.limit);
    cap_advice(&c, c.cap + 1, advice, sizeof advice);
    CHECK(strstr(advice, "machines") != NULL, "host advice: %s", advice);
    mem[1].free_bytes = 120.0 * g;

    /* a smaller device limits it, and the message names the device, its free memory and the count */
    mem[0].free_bytes = 16.0 * g;
    cap_compute(0, &p, &m, -1, mem, 2, &c);
    const long long fit16 = cap_fit(bound, cap_usable(&mem[0]), lin_need, &dev);
    CHECK(c.cap == fit16 && c.by == CAP_BY_MEMORY && c.mem == 0, "device-limited: %lld want %lld", c.cap, fit16);
    char want_text[160];
    snprintf(want_text, sizeof want_text, "the device's 16.0 GiB free hold at most %lld tiles of this deck", fit16);
    CHECK(strncmp(c.limit, want_text, strlen(want_text)) == 0, "limit: %s", c.limit);
    CHECK(dev.fixed + (double)c.cap * dev.per <= cap_usable(&mem[0]) &&
              dev.fixed + (double)(c.cap + 1) * dev.per > cap_usable(&mem[0]),
          "the largest capacity that fits");
    cap_advice(&c, c.cap + 1, advice, sizeof advice);
    CHECK(strstr(advice, "lower max_level") && strstr(advice, "GPUs"), "device advice: %s", advice);

    /* two ranks on the device: each gets its share */
    mem[0].share = 2;
    cap_compute(0, &p, &m, -1, mem, 2, &c);
    CHECK(c.cap == cap_fit(bound, cap_usable(&mem[0]), lin_need, &dev) && c.cap < fit16 / 2 + 1,
          "shared device: %lld (alone %lld)", c.cap, fit16);
    CHECK(strstr(c.limit, "split among 2 ranks") != NULL, "names the sharing: %s", c.limit);
    mem[0].share = 1;

    /* plenty of memory: the bound */
    mem[0].free_bytes = mem[1].free_bytes = 1e15;
    cap_compute(0, &p, &m, -1, mem, 2, &c);
    CHECK(c.cap == bound && c.by == CAP_BY_BOUND, "bound: %lld", c.cap);
    CHECK(strstr(c.limit, "up to max_level 9") != NULL, "bound limit: %s", c.limit);

    /* not even the engine's fixed scratch fits */
    mem[0].free_bytes = 1.0 * g;
    dev.fixed = 0.9 * g;
    cap_compute(0, &p, &m, -1, mem, 2, &c);
    CHECK(c.cap == 0 && c.by == CAP_BY_MEMORY && strstr(c.limit, "hold no tile"), "nothing fits: %lld %s", c.cap,
          c.limit);

    /* the host figure of a mesh: its arrays count as held, the need is mesh_bytes plus the extra */
    cap_host_ctx_t hc;
    cap_memory_t hm;
    setenv("DPAMR_TEST_HOST_AVAILABLE", "1e9", 1);
    cap_host_memory(&m, 1, 1000.0, &hc, &hm);
    CHECK(hm.free_bytes == 1e9 && hm.held_bytes == mesh_bytes(256.0, 2, 16, 1), "host figures %g %g", hm.free_bytes,
          hm.held_bytes);
    CHECK(hm.need(10, hm.ctx) == mesh_bytes(10.0, 2, 16, 1) + 10 * cap_host_extra_bytes(2, 16) + 1000.0, "host need");
    CHECK(cap_host_extra_bytes(2, 16) == 256 + 44, "host extra: cells + 44");
    unsetenv("DPAMR_TEST_HOST_AVAILABLE");
}

static void test_host_available(void)
{
    const double a = cap_host_available();
    FILE *fp = fopen("/proc/meminfo", "r");
    double total = 0.0;
    if (fp) {
        char line[256];
        while (fgets(line, sizeof line, fp))
            if (sscanf(line, "MemTotal: %lf", &total) == 1) break;
        fclose(fp);
    }
    CHECK(a > 0.0, "some memory is available: %g", a);
    CHECK(total == 0.0 || a <= total * 1024.0, "at most MemTotal: %g > %g", a, total * 1024.0);
    setenv("DPAMR_TEST_HOST_AVAILABLE", "12345", 1);
    CHECK(cap_host_available() == 12345.0, "the test hook replaces it");
    setenv("DPAMR_TEST_HOST_AVAILABLE", "junk", 1);
    CHECK(cap_host_available() > 0.0 && cap_host_available() != 12345.0, "a bad hook value is ignored");
    unsetenv("DPAMR_TEST_HOST_AVAILABLE");
}

static void test_xfer(void)
{
    const size_t sizes[] = { 0, 1, 4095, (4u << 20) - 1, (4u << 20) + 12345, (9u << 20) + 3 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
        const size_t n = sizes[k];
        unsigned char *a = malloc(n + 1), *b = malloc(n + 1);
        for (size_t i = 0; i < n; ++i) a[i] = (unsigned char)(i * 131 + 7);
        memset(b, 0, n + 1);
        xfer_copy(b, a, n);
        CHECK(memcmp(a, b, n) == 0 && b[n] == 0, "xfer_copy of %zu bytes", n);
        free(a);
        free(b);
    }
}

/* What progress_* print, captured from stdout into a file (at most n bytes into buf). */
static void capture(const char *path, int on, int tty, double age_ms, char *buf, size_t n)
{
    fflush(stdout);
    const int saved = dup(STDOUT_FILENO);
    FILE *fp = fopen(path, "w");
    dup2(fileno(fp), STDOUT_FILENO);
    progress_t pg;
    progress_begin(&pg, on, "download", 2e9, NULL);
    pg.tty = tty;
    pg.t0 -= age_ms; /* as if the phase had started age_ms ago */
    pg.shown -= age_ms;
    progress_update(&pg, 1e9);
    progress_end(&pg);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    fclose(fp);
    fp = fopen(path, "r");
    const size_t k = fread(buf, 1, n - 1, fp);
    buf[k] = '\0';
    fclose(fp);
}

static void test_progress(const char *dir)
{
    char path[4200], out[1024];
    snprintf(path, sizeof path, "%s/progress.txt", dir);
    capture(path, 0, 1, 60000.0, out, sizeof out);
    CHECK(out[0] == '\0', "off: silent, got '%s'", out);
    capture(path, 1, 0, 1000.0, out, sizeof out);
    CHECK(out[0] == '\0', "a log: nothing for a phase under 5 s, got '%s'", out);
    capture(path, 1, 0, 20000.0, out, sizeof out);
    CHECK(strncmp(out, "download     1.00 of 2.00 GB, 20.0 s, 0.05 GB/s, 20 s left\n", 57) == 0 &&
              strstr(out, "(done)\n"),
          "a log: a plain line, then the end: '%s'", out);
    capture(path, 1, 1, 1000.0, out, sizeof out);
    CHECK(out[0] == '\r' && strstr(out, "download     1.00 of 2.00 GB") && strchr(out, '\n') == out + strlen(out) - 1 &&
              strchr(out + 1, '\r'),
          "a terminal: one line rewritten in place, ended once: '%s'", out);
}

/* The plan of a streamed write: level by level, field by field, runs of at most tpp tiles; empty
 * levels give no piece; a piece smaller than a tile still takes one tile. */
static void test_plan(void)
{
    const int64_t ls[] = { 0, 3, 3, 10 };
    xfer_plan_t pl;
    xfer_piece_t q;
    CHECK(xfer_tiles_per_piece(48, 4) == 3 && xfer_tiles_per_piece(47, 4) == 2 && xfer_tiles_per_piece(1, 4) == 1 &&
          xfer_tiles_per_piece((size_t)64 << 20, 256) == 65536, "tiles per piece");
    xfer_plan_init(&pl, 3, ls, 2, 4, 48);
    static const int64_t want[][4] = { { 0, 0, 0, 3 }, { 0, 1, 0, 3 }, { 2, 0, 3, 3 }, { 2, 0, 6, 3 }, { 2, 0, 9, 1 },
                                       { 2, 1, 3, 3 }, { 2, 1, 6, 3 }, { 2, 1, 9, 1 } };
    int k = 0;
    while (xfer_plan_next(&pl, &q)) {
        CHECK(k < 8 && q.level == want[k][0] && q.field == want[k][1] && q.tile == want[k][2] && q.ntiles == want[k][3],
              "piece %d: level %d field %d tiles %lld+%lld", k, q.level, q.field, (long long)q.tile,
              (long long)q.ntiles);
        ++k;
    }
    CHECK(k == 8, "8 pieces, got %d", k);
    CHECK(!xfer_plan_next(&pl, &q), "done stays done");
    /* every tile of every field exactly once, in order, for many shapes */
    const int64_t ls2[] = { 0, 1, 5, 5, 5, 40, 41 };
    for (int nf = 1; nf <= 3; ++nf)
        for (size_t piece = 1; piece < 200; piece += 7) {
            xfer_plan_init(&pl, 6, ls2, nf, 2, piece);
            int64_t next = 0, count = 0;
            int L = 0, f = 0, ok = 1;
            while (xfer_plan_next(&pl, &q)) {
                if (q.level != L || q.field != f) { /* a new run starts at its level's first tile */
                    ok = ok && (q.level > L || (q.level == L && q.field == f + 1)) && q.tile == ls2[q.level];
                    L = q.level;
                    f = q.field;
                    next = q.tile;
                }
                ok = ok && q.tile == next && q.ntiles >= 1 && q.ntiles <= xfer_tiles_per_piece(piece, 2) &&
                     q.tile + q.ntiles <= ls2[q.level + 1];
                next = q.tile + q.ntiles;
                count += q.ntiles;
            }
            CHECK(ok && count == 41 * nf, "nf %d piece %zu: every tile once, in order (%lld)", nf, piece, (long long)count);
        }
    xfer_plan_init(&pl, 0, ls, 1, 4, 48);
    CHECK(!xfer_plan_next(&pl, &q), "no levels: no pieces");
}

int main(int argc, char **argv)
{
    test_plan();
    test_bound();
    test_frontier_children();
    test_fit();
    test_margin();
    test_compute();
    test_host_available();
    test_xfer();
    test_progress(argc > 1 ? argv[1] : ".");
    return TEST_DONE();
}
