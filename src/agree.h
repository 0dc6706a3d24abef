/* agree.h - agreement among MPI ranks (core layer, library dpamr_agree, built where MPI is): every
 * step of an MPI run or of the collective write that can fail on one rank alone ends in an
 * agreement, so that all ranks stop together, with one message. */
#ifndef DPAMR_AGREE_H
#define DPAMR_AGREE_H

#include <stddef.h>
#include <mpi.h>

/** 0 when every rank of comm is fine (ok != 0). Otherwise -1 on every rank, and err = the lowest
 *  failing rank's message, prefixed "rank R: " in a run of several ranks. A collective call. */
int dp_agree(MPI_Comm comm, int ok, char *err, size_t errlen);

#endif
