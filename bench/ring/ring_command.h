/*
 * attn-bench ring: ring attention over MPI (libattn_mpi) measured on this
 * machine, by running attn-bench-ring-worker (ring_worker.c, an MPI program
 * built when MPI is found) under mpiexec for each rank count and mode.
 */
#ifndef ATTN_BENCH_RING_COMMAND_H
#define ATTN_BENCH_RING_COMMAND_H

#include <stdio.h>

void bench_ring_print_help(FILE *out);

/* argv[first..] are the ring command's options; returns the exit status. */
int bench_ring_command(int argc, char **argv, int first);

#endif /* ATTN_BENCH_RING_COMMAND_H */
