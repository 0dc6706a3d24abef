/* engine.h - the interface every refinement variant implements (docs/design.md). */
#ifndef DPAMR_ENGINE_H
#define DPAMR_ENGINE_H

#include <stddef.h>
#include "deck.h"
#include "mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What an engine reports about one refinement. */
typedef struct {
    int variant;                          /* DP_VARIANT_CPU / CDP / HOST */
    int pdl;                              /* PDL attribute bit used (GPU variants) */
    double refine_ms;                     /* the refinement itself (device events on the GPU) */
    double total_ms;                      /* including uploads, sort and downloads */
    double upload_ms, sort_ms, download_ms;
    int level_first, level_last;          /* levels built: level_first..level_last */
    double level_ms[DP_MAX_LEVELS];       /* time spent building each level (-1: not measurable) */
    long long device_launches;            /* device-side launches issued (cdp), -1 otherwise */
    long long launch_failures;            /* device-side launches that failed */
    long long pool_size;                  /* pending-launch pool set (cdp), -1 otherwise */
    long long pool_bound;                 /* the computed bound on pending launches */
    long long pool_requested;             /* what was asked of the runtime (bound, or the deck's pool) */
    long long tile_capacity;              /* tile store capacity used */
    int timeline_n;                       /* kernels stamped on the device timeline (host variant) */
    int ngaps;                            /* PDL transitions measured */
    double gap_ns[DP_MAX_LEVELS];         /* start of the dependent kernel minus end of the primary:
                                             negative = overlap */
    char note[256];                       /* engine summary line */
} refine_report_t;

/** Default tile store capacity: 2^21 tiles (max_tiles = 0). */
#define DP_DEFAULT_MAX_TILES ((dp_tidx)1 << 21)

/** Tile capacity for a deck: max_tiles if set, else the full-domain bound up to max_level,
 *  capped at DP_DEFAULT_MAX_TILES and at `limit` (e.g. what fits in device memory). */
dp_tidx engine_tile_capacity(const deck_t *d, const mesh_t *m, dp_tidx limit);

/** Refine m with the CPU reference engine (plain C, OpenMP across tiles). 0 or -1 with err. */
int refine_cpu(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);

/** Refine with the variant the deck names (auto resolved by the caller). */
int engine_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);

/** Fill level 0 of a new mesh from the deck's model (for `dpamr mesh`). */
int engine_make_level0(const deck_t *d, mesh_t *m, char *err, size_t errlen);

/** Fill one new tile's cells (fields of tile t) from its parent (prolong) or the model. */
void engine_fill_tile(const dp_params *p, mesh_t *m, dp_tidx t, dp_tidx parent, int octant);

/** Octant flags of tile t (bit o set when octant o has a flagged cell). */
unsigned engine_octant_flags(const dp_params *p, const mesh_t *m, dp_tidx t);

#ifdef __cplusplus
}
#endif
#endif
