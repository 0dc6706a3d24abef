/* dist.h - `dpamr run` under MPI (src/dist.c, built with -DDPAMR_MPI=ON). */
#ifndef DPAMR_DIST_H
#define DPAMR_DIST_H

#ifdef DPAMR_MPI
/** `dpamr run DECK [key=value ...]` under MPI: argc/argv start at the deck. MPI is initialised. */
int dist_run(int argc, char **argv);
#endif

#endif
