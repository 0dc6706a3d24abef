/* refine.h - what a refinement engine reports (src/engine_cpu.c, device/): a core-layer type, so
 * the engines below the dispatch (src/engine.c) can fill it without including the dispatch. */
#ifndef DPAMR_REFINE_H
#define DPAMR_REFINE_H

#include "src/core.h"

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
    double level_ms[DP_MAX_LEVELS];       /* time spent building each level (-1: not measurable) */
    long long device_launches;            /* device-side launches issued (cdp), -1 otherwise */
    long long launch_failures;            /* device-side launches that failed */
    long long pool_size;                  /* pending-launch pool set (cdp), -1 otherwise */
    long long pool_bound;                 /* the computed bound on pending launches */
    long long pool_requested;             /* what was asked of the runtime (bound, or the deck's pool) */
    int ngaps;                            /* PDL transitions measured */
    double gap_ns[DP_MAX_LEVELS];         /* start of the dependent kernel minus end of the primary:
                                             negative = overlap */
    char note[320];                       /* engine summary line */
    long long capacity;                   /* the tile store's capacity (capacity.h), 0 when not computed */
    char capacity_limit[512];             /* what limits it (cap_t.limit) */
} refine_report_t;

#ifdef __cplusplus
}
#endif
#endif
