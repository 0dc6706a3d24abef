/* engine_cpu.h - the CPU reference engine (layer 1, dpamr_cpu): plain C, OpenMP across tiles. */
#ifndef DPAMR_ENGINE_CPU_H
#define DPAMR_ENGINE_CPU_H

#include <stddef.h>
#include "src/deck.h"
#include "src/mesh.h"
#include "src/refine.h"

/** Refine m with the CPU reference engine. r must be initialised (engine_refine does it). 0 or -1 with err. */
int refine_cpu(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);

#endif
