# mpi_flags.sh - sourced by the MPI test and bench scripts: sets the array mpiflags for $mpiexec.
# Open MPI needs --oversubscribe for more ranks than cores, and --allow-run-as-root as root.
mpiflags=()
if "$mpiexec" --version 2>&1 | grep -qiE "open mpi|openrte|open-mpi"; then
    mpiflags+=(--oversubscribe)
    [ "$(id -u)" -eq 0 ] && mpiflags+=(--allow-run-as-root)
fi
