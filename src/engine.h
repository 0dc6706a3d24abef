/* engine.h - engine dispatch (layer 2, dpamr_engine): run the variant a deck names on the CPU engine
 * (src/engine_cpu.h) or the device library (device/gpu.h); level 0 from the model. */
#ifndef DPAMR_ENGINE_H
#define DPAMR_ENGINE_H

#include <stddef.h>
#include "src/deck.h"
#include "src/mesh.h"
#include "src/refine.h"
#include "src/regrid.h"
#include "src/valid_tile.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Refine with the variant the deck names (auto resolved by the caller). */
int engine_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);

/** engine_refine, and for a GPU variant with q->validate the validation of the result on the device
 *  (gpu_refine_valid: res for valid_check_device; res->ran 0 on the cpu variant). Free res with
 *  dp_vdev_free. */
int engine_refine_valid(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, const dp_vreq *q, dp_vdev *res,
                        char *err, size_t errlen);

/** One time step's regrid of m to time t (src/regrid_cpu.c): the cpu variant; the GPU variants
 *  return -1 with a message (steps > 0 runs on variant cpu in this version). */
int engine_regrid(int variant, const deck_t *d, mesh_t *m, double t, regrid_report_t *r, char *err, size_t errlen);

/** Fill level 0 of a new mesh from the deck's model (for `dpamr mesh`). */
int engine_make_level0(const deck_t *d, mesh_t *m, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
