/*
 * attn-bench report --targets DIR: issue 5's table of performance targets,
 * from the runs bench/targets/run_targets.sh left in DIR, by that script's
 * checker (bench/targets/check_targets.py, Python 3, standard library).
 */
#ifndef ATTN_BENCH_REPORT_TARGETS_H
#define ATTN_BENCH_REPORT_TARGETS_H

/* Prints the table (against the stored baseline, bench/targets/baseline.json)
 * and writes it as Markdown to out_dir/targets.md. 0 on success, -1 when the
 * checker could not run or failed. */
int bench_report_targets(const char *run_dir, const char *out_dir);

#endif /* ATTN_BENCH_REPORT_TARGETS_H */
