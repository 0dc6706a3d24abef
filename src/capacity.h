/* capacity.h - how many tiles a run may make (core layer): the deck's max_tiles, or, with
 * max_tiles = 0, as many tiles as the memory holds (the device's for the GPU variants, the host's
 * for every variant: the host holds the result), never more than a refinement of the input can
 * reach up to max_level. The memory figures come in as parameters, so the computation is tested
 * without a device (tests/test_capacity.c); cap_host_available and the GPU library read the real
 * ones. */
#ifndef DPAMR_CAPACITY_H
#define DPAMR_CAPACITY_H

#include <stddef.h>
#include "src/core.h"
#include "src/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAP_GIB 1073741824.0

/** Bytes a run needs with a tile store of cap tiles: the store and every scratch buffer sized from
 *  it. Nondecreasing in cap; a huge value (e.g. 1e300) for a capacity that cannot be used. */
typedef double (*cap_need_fn)(long long cap, const void *ctx);

/** One memory a capacity must fit in. */
typedef struct {
    const char *name;  /* "device", "host": messages say "the device's 139.2 GiB free" */
    const char *state; /* "free", "available" */
    double free_bytes; /* what the system reports free now (cudaMemGetInfo; MemAvailable, cgroup) */
    double held_bytes; /* bytes this process holds already that need() counts again (the loaded mesh) */
    int share;         /* processes that split this memory evenly (MPI ranks on one device or node); <= 1: 1 */
    cap_need_fn need;
    const void *ctx;
} cap_memory_t;

/** What limits a capacity. */
enum { CAP_BY_MAX_TILES = 0, CAP_BY_BOUND, CAP_BY_MEMORY };

typedef struct {
    long long cap;   /* tiles; below the input's tile count when even those do not fit (callers fail) */
    int by;          /* CAP_BY_* */
    long long bound; /* cap_tile_bound of the run */
    int mem;         /* CAP_BY_MEMORY: the index of the memory that limits it, else -1 */
    const char *mem_name; /* CAP_BY_MEMORY: its name ("device", "host") */
    double usable;   /* CAP_BY_MEMORY: that memory's usable bytes (cap_usable) */
    char limit[512]; /* what limits it, for every message that names the capacity */
} cap_t;

/** a << s, saturating at 2^62 (level sizes of deep 3D domains pass 2^63). */
static inline long long cap_shl(long long a, int s)
{
    if (a <= 0) return 0;
    if (s >= 62 || a > ((1ll << 62) >> s)) return 1ll << 62;
    return a << s;
}

/** Bytes of a memory of free_bytes left unused: 1 GiB plus 3% on a device or host of any size,
 *  at most half of it (the runtime's own allocations, fragmentation, page tables). */
double cap_margin(double free_bytes);

/** Bytes one process may use: (free + held) / share - cap_margin(free / share). 0 at least. */
double cap_usable(const cap_memory_t *mem);

/** An upper bound on the tiles of a refinement of m up to max_level: m's tiles, plus for each level
 *  above its finest min(u_k, every tile of that level's domain), u_1 = c1 (the frontier's children,
 *  when known: c1 >= 0) or the frontier's tiles x 2^dim, u_k = u_{k-1} x 2^dim. For a level-0 mesh
 *  and c1 < 0 this is every tile of every level of the domain. Saturates at 2^62. */
long long cap_tile_bound(const dp_params *p, const mesh_t *m, long long c1);

/** The children the frontier (m's finest level) gets: its flagged octants (tile_octant_flags, the
 *  criterion every engine shares), counted over the OpenMP threads. */
long long cap_frontier_children(const dp_params *p, const mesh_t *m);

/** The largest c in [0, hi] with need(c) <= usable (need nondecreasing; binary search); -1 when
 *  not even need(0) fits. */
long long cap_fit(long long hi, double usable, cap_need_fn need, const void *ctx);

/** The capacity of a run refining m: max_tiles when > 0 (at most the tile bound, with c1 as there),
 *  else the tile bound limited by each of the nmem memories in turn. Fills c, with c->limit saying what limits it,
 *  worded to follow "capacity N: ": "max_tiles = 200", "the device's 139.2 GiB free hold at most
 *  120000000 tiles of this deck (1.1 kB per tile with the engine's scratch, 5.2 GiB left unused)",
 *  "every tile a refinement of the input can reach up to max_level 9". */
void cap_compute(long long max_tiles, const dp_params *p, const mesh_t *m, long long c1, const cap_memory_t *mems,
                 int nmem, cap_t *c);

/** What to do after a run needed `needed` tiles of a capacity c, into buf: "set max_tiles >= N
 *  (0: as many as memory holds), or lower max_level", "lower max_level or refine less (threshold),
 *  or spread the root tiles over more ranks (mpirun)". */
const char *cap_advice(const cap_t *c, long long needed, char *buf, size_t n);

/** The GPU engines' tile store overflow message into err: the tiles needed (`which` says what the
 *  count leaves out), the capacity, what limits it and what to do. */
void cap_overflow_message(const cap_t *c, long long needed, const char *which, char *err, size_t errlen);

/** The host's available memory in bytes: MemAvailable of /proc/meminfo (else free pages from
 *  sysconf), at most the room left in this process's cgroup (v2 memory.max, v1 limit_in_bytes; page
 *  cache it could drop counted as room). DPAMR_TEST_HOST_AVAILABLE=BYTES replaces it (tests). */
double cap_host_available(void);

/** Host bytes per tile of a run beyond its tile store (mesh_bytes): the writer's AMRBox (24) and
 *  ghost bytes (one per cell) of the largest level, the validator's flags (3), the cpu engine's
 *  level scratch (9) and the parent links of an MPI write (8). */
double cap_host_extra_bytes(int dim, int B);

/** The host memory of this process for a run on mesh m: cap_host_available, the loaded mesh's
 *  arrays held, `share` ranks on this node; need = mesh_bytes + cap_host_extra_bytes per tile plus
 *  fixed_bytes (e.g. the GPU variants' pinned staging buffers). ctx must outlive the cap_memory_t:
 *  it is filled here. */
typedef struct {
    int dim, B, nf;
    double fixed_bytes;
} cap_host_ctx_t;
void cap_host_memory(const mesh_t *m, int share, double fixed_bytes, cap_host_ctx_t *ctx, cap_memory_t *mem);

#ifdef __cplusplus
}
#endif
#endif
