/*
 * attn-bench: the benchmark and the experiments of the attn library.
 *
 *   attn-bench [run] [OPTIONS]     the sweep (run.c; options.c, sweep.c,
 *                                  measure.c, peer_*.c, ceiling.c, csv_out.c,
 *                                  pipeline/run_record.c, ...)
 *   attn-bench sdpa [OPTIONS]      attention on given Q, K, V (sdpa_run.c;
 *                                  sdpa_options.c, sdpa_measure.c, ...)
 *   attn-bench report [OPTIONS]    Markdown and plots of run CSVs
 *                                  (report/: report_command.c, the Python tool)
 *   attn-bench ring [OPTIONS]      ring attention over MPI (ring/: ring_command.c
 *                                  runs ring_worker.c under mpiexec)
 *   attn-bench scaling|rank|init|asymmetry [OPTIONS]   the experiments
 *                                  (experiment.c, exp_*.c)
 *   attn-bench help [COMMAND]
 */
#include <stdio.h>
#include <string.h>

#include "experiments/experiment.h"
#include "run/help.h"
#include "report/report_command.h"
#include "ring/ring_command.h"
#include "run/run.h"
#include "run/sdpa_run.h"

enum { EXIT_BAD_ARGUMENTS = 2 };

static int help_command(int argc, char **argv)
{
    if (argc < 3) {
        bench_help_overview(stdout);
        return 0;
    }
    const char *topic = argv[2];
    if (strcmp(topic, "run") == 0)
        bench_help_run(stdout);
    else if (strcmp(topic, "sdpa") == 0)
        bench_sdpa_print_help(stdout);
    else if (strcmp(topic, "report") == 0)
        bench_report_print_help(stdout);
    else if (strcmp(topic, "ring") == 0)
        bench_ring_print_help(stdout);
    else if (bench_is_experiment(topic))
        bench_experiment_print_help(topic, stdout);
    else if (strcmp(topic, "help") == 0)
        bench_help_overview(stdout);
    else {
        fprintf(stderr, "attn-bench help: unknown command '%s'\n", topic);
        bench_help_overview(stderr);
        return EXIT_BAD_ARGUMENTS;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *command = argc > 1 ? argv[1] : NULL;
    if (!command || command[0] == '-')
        return bench_run_command(argc, argv, 1);
    if (strcmp(command, "run") == 0)
        return bench_run_command(argc, argv, 2);
    if (strcmp(command, "sdpa") == 0)
        return bench_sdpa_command(argc, argv, 2);
    if (strcmp(command, "report") == 0)
        return bench_report_command(argc, argv, 2);
    if (strcmp(command, "ring") == 0)
        return bench_ring_command(argc, argv, 2);
    if (strcmp(command, "help") == 0)
        return help_command(argc, argv);
    if (bench_is_experiment(command))
        return bench_experiment_command(command, argc, argv, 2);
    fprintf(stderr, "attn-bench: unknown command '%s'\n", command);
    bench_help_overview(stderr);
    return EXIT_BAD_ARGUMENTS;
}
