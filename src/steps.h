/* steps.h - time steps (app layer): `dpamr run` and `dpamr bench` on a deck with steps > 0. The
 * regrid itself is the engines' (engine_regrid); this is the host-side driver around it: the time
 * of each step, the output series, restart, validation and the per-step report. */
#ifndef DPAMR_STEPS_H
#define DPAMR_STEPS_H

#include <stddef.h>
#include "src/deck.h"
#include "src/mesh.h"

/** `dpamr run` of a deck with steps > 0, after run_load (deck parsed, m read from mesh_file); t0 is
 *  the run's start (timer_ms). Returns the exit status (0, 1 bad input or a failed run, 2 failed
 *  validation). Frees m. */
int steps_run(deck_t *d, mesh_t *m, double t0);

/** The file of step `step` of an output pattern (deck_pattern_check) into out. 0, or -1 when it
 *  does not fit n bytes. */
int steps_file_name(const char *pattern, long long step, char *out, size_t n);

/** The series file of an output pattern: the pattern without its step number (and the separators
 *  `_`, `-`, `.` right before ".hdf" it leaves), plus ".series": run_%05d.hdf -> run.hdf.series. */
int steps_series_name(const char *pattern, char *out, size_t n);

#endif
