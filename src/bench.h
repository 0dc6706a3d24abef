/* bench.h - `dpamr bench`: check the variants agree byte for byte, then time them. */
#ifndef DPAMR_BENCH_H
#define DPAMR_BENCH_H
#include <stddef.h>
#include "src/deck.h"
#include "src/mesh.h"
/** Entry point of `dpamr bench DECK [key=value ...]`; returns the exit status. */
int bench_main(int argc, char **argv);
#endif
