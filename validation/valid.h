/* valid.h - checks of a refined hierarchy: structure, conservation, checksums. */
#ifndef DPAMR_VALID_H
#define DPAMR_VALID_H

#include <stdint.h>
#include "../src/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Result of valid_check. Checksums are in canonical order, so they are independent of the
 *  variant that built the mesh and serve as regression values. */
typedef struct {
    int passed;                 /* 1 when every check passed */
    long long nfail;            /* number of failed checks */
    char first_failure[512];    /* the first failure, in words ("" when passed) */
    int conservation_checked;   /* 1 for fill=prolong */
    double conservation_tol;    /* relative tolerance applied */
    double conservation_max_rel;/* largest relative error seen */
    int nlevels, nf;
    dp_tidx tiles[DP_MAX_LEVELS];
    double sum[DP_MAX_LEVELS][DP_MAX_FIELDS];      /* sum of cell values x cell volume */
    uint64_t hash[DP_MAX_LEVELS][DP_MAX_FIELDS];   /* FNV-1a 64 over the float bits */
    uint64_t tree_hash;         /* FNV-1a 64 over (level, i, j, k, parent) of every tile */
    uint64_t total_hash;        /* FNV-1a 64 combining tree_hash and every level hash */
} valid_report_t;

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
