/* capacity.c - how many tiles a run may make (capacity.h). */
#include "src/capacity.h"
#include "src/tile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP_SAT (1ll << 62)

static long long sat_add(long long a, long long b) { return a > CAP_SAT - b ? CAP_SAT : a + b; }


double cap_margin(double free_bytes)
{
    const double m = CAP_GIB + 0.03 * free_bytes;
    return m < 0.5 * free_bytes ? m : 0.5 * free_bytes;
}

double cap_usable(const cap_memory_t *mem)
{
    const int share = mem->share > 1 ? mem->share : 1;
    const double mine = mem->free_bytes / share;
    const double u = mine + mem->held_bytes - cap_margin(mine);
    return u > 0.0 ? u : 0.0;
}

long long cap_tile_bound(const dp_params *p, const mesh_t *m, long long c1)
{
    if (m->nlevels <= 0) return m->ntiles;
    const int Lp = m->nlevels - 1;
    const uint64_t r = mesh_root_tiles(m->root); /* a mesh read from a file: may pass long long */
    const long long roots = r > (uint64_t)CAP_SAT ? CAP_SAT : (long long)r;
    long long total = m->ntiles, u = m->level_start[Lp + 1] - m->level_start[Lp];
    for (int L = Lp + 1; L <= p->max_level && u > 0; ++L) {
        const long long dom = cap_shl(roots, p->dim * L);
        u = L == Lp + 1 && c1 >= 0 ? c1 : cap_shl(u, p->dim);
        if (u > dom) u = dom;
        total = sat_add(total, u);
    }
    return total;
}

long long cap_frontier_children(const dp_params *p, const mesh_t *m)
{
    if (m->nlevels <= 0 || m->nlevels - 1 >= p->max_level) return 0; /* nothing is refined */
    const dp_tidx s = m->level_start[m->nlevels - 1], e = m->level_start[m->nlevels];
    long long c1 = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : c1)
    for (dp_tidx t = s; t < e; ++t) c1 += dp_popcount(tile_octant_flags(p, m, t));
    return c1;
}

long long cap_fit(long long hi, double usable, cap_need_fn need, const void *ctx)
{
    if (need(0, ctx) > usable) return -1;
    if (hi <= 0 || need(hi, ctx) <= usable) return hi > 0 ? hi : 0;
    long long lo = 0; /* need(lo) fits, need(hi) does not */
    while (hi - lo > 1) {
        const long long mid = lo + (hi - lo) / 2;
        if (need(mid, ctx) <= usable) lo = mid;
        else hi = mid;
    }
    return lo;
}

/** "1.2 kB", "3.4 MB" (decimal units, as run_bytes_text). */
static const char *bytes_text(double b, char *buf, size_t n)
{
    if (b < 1e3) snprintf(buf, n, "%.0f bytes", b);
    else if (b < 1e6) snprintf(buf, n, "%.1f kB", b / 1e3);
    else if (b < 1e9) snprintf(buf, n, "%.1f MB", b / 1e6);
    else snprintf(buf, n, "%.2f GB", b / 1e9);
    return buf;
}

/** "139.2 GiB", "12.0 MiB", "512 kiB" (binary units: what the memory reports). */
static const char *gib_text(double b, char *buf, size_t n)
{
    if (b >= CAP_GIB) snprintf(buf, n, "%.1f GiB", b / CAP_GIB);
    else if (b >= 1048576.0) snprintf(buf, n, "%.1f MiB", b / 1048576.0);
    else snprintf(buf, n, "%.0f kiB", b / 1024.0);
    return buf;
}

void cap_compute(long long max_tiles, const dp_params *p, const mesh_t *m, long long c1, const cap_memory_t *mems,
                 int nmem, cap_t *c)
{
    memset(c, 0, sizeof *c);
    c->bound = cap_tile_bound(p, m, c1);
    c->mem = -1;
    if (max_tiles > 0 && max_tiles <= c->bound) {
        c->cap = max_tiles;
        c->by = CAP_BY_MAX_TILES;
        snprintf(c->limit, sizeof c->limit, "max_tiles = %lld", max_tiles);
        return;
    }
    c->cap = c->bound;
    c->by = CAP_BY_BOUND;
    snprintf(c->limit, sizeof c->limit, "every tile a refinement of the input can reach up to max_level %d%s",
             p->max_level, max_tiles > 0 ? " (fewer than max_tiles)" : "");
    if (max_tiles > 0) return; /* the deck's capacity: the GPU store checks it fits before allocating */
    for (int k = 0; k < nmem; ++k) {
        const cap_memory_t *mem = &mems[k];
        const double usable = cap_usable(mem);
        long long fit = cap_fit(c->cap, usable, mem->need, mem->ctx);
        if (fit >= c->cap) continue;
        if (fit < 0) fit = 0;
        c->cap = fit;
        c->by = CAP_BY_MEMORY;
        c->mem = k;
        c->mem_name = mem->name;
        c->usable = usable;
        char share[64] = "", per[32] = "";
        if (mem->share > 1) snprintf(share, sizeof share, ", split among %d ranks,", mem->share);
        const double n0 = mem->need(0, mem->ctx), n1 = mem->need(fit > 0 ? fit : 1, mem->ctx);
        bytes_text((n1 - n0) / (double)(fit > 0 ? fit : 1), per, sizeof per);
        char have[32], left[32], first[32], use[32];
        gib_text(mem->free_bytes + mem->held_bytes, have, sizeof have);
        if (fit > 0)
            snprintf(c->limit, sizeof c->limit,
                     "the %s's %s %s%s hold at most %lld tiles of this deck (%s per tile with the engine's scratch, "
                     "%s left unused)",
                     mem->name, have, mem->state, share, fit, per,
                     gib_text(mem->free_bytes / (mem->share > 1 ? mem->share : 1) + mem->held_bytes - usable, left,
                              sizeof left));
        else
            snprintf(c->limit, sizeof c->limit,
                     "the %s's %s %s%s hold no tile of this deck (the engine needs %s before the first tile, %s "
                     "usable)",
                     mem->name, have, mem->state, share, gib_text(n0, first, sizeof first),
                     gib_text(usable, use, sizeof use));
    }
}

const char *cap_advice(const cap_t *c, long long needed, char *buf, size_t n)
{
    if (c->by == CAP_BY_MAX_TILES)
        snprintf(buf, n, "set max_tiles >= %lld (or 0: as many as memory holds), or lower max_level", needed);
    else if (c->by == CAP_BY_MEMORY)
        snprintf(buf, n, "lower max_level or refine less (threshold, criterion), or spread the root tiles over more "
                         "%s (mpirun -np N)", c->mem_name && strcmp(c->mem_name, "device") == 0 ? "GPUs" : "machines");
    else
        snprintf(buf, n, "no refinement of the input can need more: this is a bug, please report the deck");
    return buf;
}

/* ---- the host's memory ----------------------------------------------------------------------- */

/** The first number after `key` in file path (a line "key N" or "key: N kB"), scaled by 1024 when
 *  followed by kB; -1 when absent. key "" reads the file's first number ("max" gives -2). */
static double read_number(const char *path, const char *key)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return -1.0;
    char line[512];
    double v = -1.0;
    const size_t kl = strlen(key);
    while (fgets(line, sizeof line, fp)) {
        if (kl && (strncmp(line, key, kl) != 0 || (line[kl] != ':' && line[kl] != ' '))) continue;
        const char *s = line + kl;
        while (*s == ':' || *s == ' ' || *s == '\t') ++s;
        if (strncmp(s, "max", 3) == 0) {
            v = -2.0;
            break;
        }
        char *end = NULL;
        const double x = strtod(s, &end);
        if (end == s) break;
        v = strstr(end, "kB") ? x * 1024.0 : x;
        break;
    }
    fclose(fp);
    return v;
}

/** This process's cgroup path for controller ctl ("" = the v2 unified line "0::"), into buf. */
static int cgroup_path(const char *ctl, char *buf, size_t n)
{
    FILE *fp = fopen("/proc/self/cgroup", "r");
    if (!fp) return -1;
    char line[1024];
    int found = -1;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = strchr(line, ':');
        char *b = a ? strchr(a + 1, ':') : NULL;
        if (!b) continue;
        *b = '\0';
        const int match = ctl[0] ? strstr(a + 1, ctl) != NULL : (a[1] == '\0' && strncmp(line, "0", 1) == 0);
        if (!match) continue;
        snprintf(buf, n, "%s", b + 1);
        found = 0;
        break;
    }
    fclose(fp);
    return found;
}

/** Room left in the cgroup whose files are in dir (v2 or v1 names), or -1 without a limit there. */
static double cgroup_room(const char *dir, int v2)
{
    char f[1400];
    snprintf(f, sizeof f, "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    const double limit = read_number(f, "");
    if (limit < 0 || limit >= 1e18) return -1.0; /* "max", absent, or the v1 "unlimited" 2^63 - page */
    snprintf(f, sizeof f, "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes");
    const double used = read_number(f, "");
    if (used < 0) return -1.0;
    snprintf(f, sizeof f, "%s/memory.stat", dir);
    const double cache = read_number(f, v2 ? "inactive_file" : "total_inactive_file");
    const double room = limit - used + (cache > 0 ? cache : 0.0);
    return room > 0 ? room : 0.0;
}

double cap_host_available(void)
{
    const char *env = getenv("DPAMR_TEST_HOST_AVAILABLE");
    if (env && env[0]) {
        char *end = NULL;
        const double v = strtod(env, &end);
        if (end != env && v >= 0) return v;
    }
    double avail = read_number("/proc/meminfo", "MemAvailable");
    if (avail < 0) {
        const double page = (double)sysconf(_SC_PAGESIZE);
        const long pages = sysconf(_SC_AVPHYS_PAGES);
        avail = page > 0 && pages > 0 ? page * (double)pages : 0.0;
    }
    char rel[1024], dir[1200];
    double room = -1.0;
    if (cgroup_path("", rel, sizeof rel) == 0) { /* v2 */
        snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", strcmp(rel, "/") == 0 ? "" : rel);
        room = cgroup_room(dir, 1);
        if (room < 0) room = cgroup_room("/sys/fs/cgroup", 1);
    }
    if (room < 0 && cgroup_path("memory", rel, sizeof rel) == 0) { /* v1 */
        snprintf(dir, sizeof dir, "/sys/fs/cgroup/memory%s", strcmp(rel, "/") == 0 ? "" : rel);
        room = cgroup_room(dir, 0);
        if (room < 0) room = cgroup_room("/sys/fs/cgroup/memory", 0);
    }
    return room >= 0 && room < avail ? room : avail;
}

double cap_host_extra_bytes(int dim, int B) { return 24.0 + 3.0 + 9.0 + 8.0 + (double)dp_cells(dim, B); }

static double host_need(long long cap, const void *ctx)
{
    const cap_host_ctx_t *h = ctx;
    return mesh_bytes((double)cap, h->dim, h->B, h->nf) + (double)cap * cap_host_extra_bytes(h->dim, h->B) +
           h->fixed_bytes;
}

void cap_host_memory(const mesh_t *m, int share, double fixed_bytes, cap_host_ctx_t *ctx, cap_memory_t *mem)
{
    ctx->dim = m->dim;
    ctx->B = m->B;
    ctx->nf = m->nf;
    ctx->fixed_bytes = fixed_bytes;
    memset(mem, 0, sizeof *mem);
    mem->name = "host";
    mem->state = "available";
    mem->free_bytes = cap_host_available();
    mem->held_bytes = mesh_bytes((double)m->cap, m->dim, m->B, m->nf);
    mem->share = share;
    mem->need = host_need;
    mem->ctx = ctx;
}

void cap_overflow_message(const cap_t *c, long long needed, const char *which, char *err, size_t errlen)
{
    char advice[256];
    snprintf(err, errlen, "tile store overflow on the device: at least %lld tiles needed (%s), capacity %lld: %s; %s",
             needed, which, c->cap, c->limit, cap_advice(c, needed, advice, sizeof advice));
}
