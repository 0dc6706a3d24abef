/* regrid.h - what a regrid (one time step's refine and coarsen, src/regrid_cpu.c) reports: a
 * core-layer type, like refine.h, so every engine can fill it. */
#ifndef DPAMR_REGRID_H
#define DPAMR_REGRID_H

#include "src/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What one regrid did (docs/design.md, "Time steps"). */
typedef struct {
    double regrid_ms;                  /* the whole regrid: sample, restrict, flag, rebuild */
    double sample_ms, restrict_ms, rebuild_ms;
    /* level_ms[L]: the rebuild's time for level L (its tiles written and filled), L >= 1; -1 where
     * the level was not built. cpu: the wall time of the pass that flags level L - 1 and writes level
     * L. GPU: device timestamps (%globaltimer) from the end of the kernel of level L - 1 to the end of
     * level L's (regridStep, which also flags level L), so the launch between them is in it (level 1:
     * from its kernel's first block). */
    double level_ms[DP_MAX_LEVELS];
    long long tiles_before, tiles_after;
    long long added, removed, kept;    /* kept + removed = tiles_before, kept + added = tiles_after */
    double changed_fraction;           /* (added + removed) / tiles_before */
    int nlevels;                       /* levels after the regrid */
    int conservation_checked;          /* fill = prolong: the composite totals before and after */
    double total_before[DP_MAX_FIELDS], total_after[DP_MAX_FIELDS]; /* sum of value x cell volume over
                                          the cells without a child (the composite), per field */
    double abs_before[DP_MAX_FIELDS], abs_after[DP_MAX_FIELDS]; /* the sums of |value| x cell volume
                                          (conservation_rel's denominators): an MPI run sums the totals of
                                          its ranks and takes the conservation from the sums (src/dist.c) */
    double conservation_rel;           /* max over fields |after - before| / sum of |value| x volume */
    /* the GPU regrids (device/regrid_gpu.cu; 0 on cpu): regrid_ms and the phases are CUDA event times
     * on the engine's stream; transfer_ms is the host wall time of what the regrid moved between
     * device and host (level sizes, per-tile sums for the totals), not part of regrid_ms */
    double transfer_ms;
    long long device_launches;         /* cdp: device-side launches of the rebuild (-1: none) */
} regrid_report_t;

#ifdef __cplusplus
}
#endif
#endif
