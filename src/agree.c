/* agree.c - agreement among MPI ranks (agree.h). */
#include "src/agree.h"

#include <stdio.h>

int dp_agree(MPI_Comm comm, int ok, char *err, size_t errlen)
{
    int rank, size, first;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = ok ? size : rank;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) return 0;
    char buf[2048];
    if (rank == first && size > 1) snprintf(buf, sizeof buf, "rank %d: %s", rank, err);
    else if (rank == first) snprintf(buf, sizeof buf, "%s", err);
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, comm);
    if (err && errlen > 0) snprintf(err, errlen, "%s", buf);
    return -1;
}
