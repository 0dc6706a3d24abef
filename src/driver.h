/* driver.h - pieces of the dpamr driver (src/main.c) shared with the MPI run (src/dist.c). */
#ifndef DPAMR_DRIVER_H
#define DPAMR_DRIVER_H

#include <stddef.h>
#include "../io/h5io.h"
#include "deck.h"
#include "mesh.h"

#define ERRLEN 2048

/** Print "dpamr: error: msg" to stderr; returns 1 (the exit status). */
int driver_die(const char *msg);
/** The mesh file must describe the deck's domain: same dim, tile size, root grid, geometry, fields. */
int driver_mesh_matches_deck(const mesh_t *m, const deck_t *d, const char *file, char *err, size_t n);
/** A mesh to refine must have tiles on its finest declared level (the frontier). */
int driver_mesh_has_frontier(const mesh_t *m, const char *file, char *err, size_t n);
/** Refuse to write `target` over one of dpamr's inputs (the deck, and the mesh file if check_mesh). */
int driver_refuse_overwrite(const char *key, const char *target, const deck_t *d, int check_mesh, char *err, size_t n);
/** Provenance common to every file a run writes. */
void driver_fill_meta(h5io_meta_t *meta, const deck_t *d, const char *variant, const valid_report_t *v);
/** The subcommands (argv[0] = "dpamr"); `run` without MPI. */
int driver_main(int argc, char **argv);

#ifdef DPAMR_MPI
/** `dpamr run DECK [key=value ...]` under MPI: argc/argv start at the deck. MPI is initialised. */
int dist_run(int argc, char **argv);
#endif

#endif
