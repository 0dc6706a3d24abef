/* valid.h - checks of a refined hierarchy: structure, conservation, checksums. */
#ifndef DPAMR_VALID_H
#define DPAMR_VALID_H

#include <stdint.h>
#include "src/mesh.h"
#include "src/valid_tile.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Result of valid_check. Checksums are in canonical order, so they are independent of the
 *  variant that built the mesh and serve as regression values. */
typedef struct {
    int passed;                 /* 1 when every check passed */
    long long nfail;            /* number of failed checks */
    char first_failure[512];    /* the first failure, in words ("" when passed) */
    long long first_key;        /* where it comes in the order of the checks, VALID_KEY(phase, global
                                   tile): the smallest key over the parts of a distributed mesh is the
                                   failure a single-rank check reports first (VALID_KEY_NONE: none) */
    int conservation_checked;   /* 1 for fill=prolong */
    double conservation_tol;    /* relative tolerance applied */
    double conservation_max_rel;/* largest relative error seen */
    int nlevels, nf;
    dp_tidx tiles[DP_MAX_LEVELS];
    double sum[DP_MAX_LEVELS][DP_MAX_FIELDS];      /* sum of cell values x cell volume */
    uint64_t hash[DP_MAX_LEVELS][DP_MAX_FIELDS];   /* FNV-1a 64 over the chunk hashes (valid_chunk_t) */
    uint64_t tree_hash;         /* FNV-1a 64 over the chunk tree hashes, level by level */
    uint64_t total_hash;        /* FNV-1a 64 combining tree_hash and every level hash */
} valid_report_t;

#define VALID_KEY(phase, tile) (((long long)(phase) << 56) | (long long)(tile))
#define VALID_KEY_NONE 0x7fffffffffffffffLL

/** Partial checksums of one chunk: the tiles of one level that descend from one root tile
 *  (dp_vchunk, src/valid_tile.h: a tile's double sum and FNV-1a 64 per field and its tree hash,
 *  computed by dp_vtile_field and dp_vtile_tree, added tile by tile in canonical order). Checksums
 *  are folded chunk by chunk in canonical (root Morton) order, so a mesh split into contiguous root
 *  ranges (MPI ranks) gives the same values as the whole mesh on one rank. */
typedef dp_vchunk valid_chunk_t;

/** The chunks of a mesh (or of one rank's part), level by level, in canonical order. */
typedef struct {
    int nlevels, nf;
    dp_tidx n[DP_MAX_LEVELS];
    valid_chunk_t *chunk[DP_MAX_LEVELS];
} valid_parts_t;

/** How a part of a distributed mesh is checked (NULL options: the whole mesh, complete = 1). */
typedef struct {
    int complete;          /* as in valid_check_mode */
    dp_tidx roots;         /* root tiles this part must hold (-1: the whole root grid) */
    const dp_tidx *gstart; /* global canonical index of the part's first tile of each level, used for
                              the tree hash and messages (NULL: the part is the whole mesh) */
    int progress;          /* 1: a progress line (src/xfer.h) over the passes through the cells */
    /* NULL: every cell is in m. Else the cells are still arriving (`dpamr check` validates while it
     * reads): wait(wait_ctx, k) returns once the cells of tiles [0, k) are in m, with the number of
     * tiles whose cells are all in (>= k: the passes take them all, up to a block), or -1 when they
     * never will be (the report then says so; the caller has the reason). */
    dp_tidx (*wait)(void *wait_ctx, dp_tidx tiles);
    void *wait_ctx;
    int wait_threads; /* > 0: the threads of the passes while cells are still to come (the reader
                         has its own; more threads than cores make every loop wait for a preempted
                         one); all of them once every cell is in. 0: always all */
    dp_tidx block; /* tiles per block of the passes (0: n / 64, at least 65536); with wait and a
                      level-sorted array the most per block, the least block / 16 */
} valid_opts_t;

/** valid_check_part and valid_fold of a whole mesh with options o (valid_check_mode with a progress
 *  line, `dpamr check`). Returns r->passed. */
int valid_check_opts(const mesh_t *m, const dp_params *p, const valid_opts_t *o, valid_report_t *r);

/** The checks of valid_check_mode on one part, without the fold: r gets the part's tile counts,
 *  failures and conservation error; parts gets its chunks (free with valid_parts_free).
 *  Returns r->passed. */
int valid_check_part(const mesh_t *m, const dp_params *p, const valid_opts_t *o, valid_report_t *r,
                     valid_parts_t *parts);

/** 1 when valid_check_device makes the report from what the device found (g) without the CPU
 *  validator: the device ran on m's tiles and passed every check, and m's header and level index
 *  (phases 1 and 4, which need no cells) pass. Then m's cells need not be on the host (a streamed GPU
 *  run); 0: valid_check_device runs valid_check_part, which needs them. */
int valid_device_suffices(const mesh_t *m, const dp_params *p, const valid_opts_t *o, const dp_vdev *g);
/** valid_check_part from what the GPU validator found on its tile store (g, for the mesh m it
 *  downloaded): when the device's checks all passed, the report is assembled here from its counts,
 *  conservation maximum and chunks (the tree hashes recomputed on the host when o->gstart maps parent
 *  indices to other global ones, an MPI rank's part), with the phase 1 and phase 4 checks run on m's
 *  header; it is the report valid_check_part gives, bit for bit. When the device did not validate
 *  (g NULL or g->ran 0) or found any failure, valid_check_part runs on m and gives the report (the
 *  first failure's words come from the CPU). *by_cpu: 1 when the CPU validator made the report.
 *  Returns r->passed. */
int valid_check_device(const mesh_t *m, const dp_params *p, const valid_opts_t *o, const dp_vdev *g,
                       valid_report_t *r, valid_parts_t *parts, int *by_cpu);

/** Fold the chunks into r: sum (chunk sums in order, times the cell volume), hash (FNV-1a 64 over
 *  the chunk hashes), tree_hash (over every chunk's tree hash, level by level) and total_hash. */
void valid_fold(const valid_parts_t *parts, const dp_params *p, valid_report_t *r);

void valid_parts_free(valid_parts_t *parts);

/** Check m against p (criterion, max_level, fill mode). Never aborts: fills r and returns r->passed.
 *  complete = 1: m is the output of a refinement to p->max_level, so every flagged octant of every
 *  level below max_level must have its child (a lost launch or a lost last level fails).
 *  complete = 0: m may be an input mesh, refined only below its finest level. */
int valid_check_mode(const mesh_t *m, const dp_params *p, int complete, valid_report_t *r);

/** valid_check_mode with complete = 1 when m has more than one level (a level-0 file is checked
 *  as an input mesh): what `dpamr check` applies to a file. */
int valid_check(const mesh_t *m, const dp_params *p, valid_report_t *r);

/** Print the report (one line per level, then the verdict) to stdout. */
void valid_print(const valid_report_t *r, const mesh_t *m);

#ifdef __cplusplus
}
#endif
#endif
