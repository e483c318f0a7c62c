"""The sections of report.md, each a function returning its Markdown text:
the machine (from the run's JSON), the ceiling, the peers, the results
table of every row, and how to reproduce. The plots' section is report.py's
(it draws them).

C's printf formats (%g, %.4g, ...) are Python's % formats: the numbers read
as attn-bench's own table and CSV print them.
"""
import math
import os
from functools import partial

import figures
import runs
from runs import json_member, json_number, json_text

# The FLOP counts: attn-bench passes its own text (measure/flops.c) when it
# runs this tool; run directly, the report points there.
FLOPS_FORMULA = os.environ.get(
    "ATTN_BENCH_FLOPS_FORMULA",
    "as `attn-bench help run` states under FLOP COUNTS")

RESULTS_NOTE = (
    "attn ms and the peers' ms: median time of one call. × PEER: the peer's time over "
    "attn's (above 1: attn is faster). % FMA peak: attn's GFLOP/s over the machine's FMA "
    "peak of its dtype and thread count, measured in the same run (the share that "
    "counts); % ceiling: over the BLAS GEMM ceiling, for information. check: the relative error of the reference check "
    "(skipped: a backward longer than --check-grad-max-T). A '-' is a number not "
    "measured (a peer not installed, a naive peer beyond --naive-max-T, the NumPy "
    "lesson's missing backward, numpy32 on f64: the lesson's code is float64 there "
    "already).")
PROMOTED_NOTE = (
    "† The peer's output was float64 on an f32 row: with NumPy >= 2 the lesson's "
    "`/ np.sqrt(hs)` (a float64 scalar) promotes the float32 scores to float64, so "
    "the softmax and weights · V ran in double precision. × numpy32 is the same code "
    "with `sqrt(hs)` as a float32 scalar, float32 throughout: the float32 ratio.")


def table_head(columns, align):
    """A Markdown table's header and alignment rows; align has one 'l' or
    'r' per column."""
    return ("".join(f"| {c} " for c in columns) + "|\n"
            + "".join("|---:" if a == "r" else "|---" for a in align) + "|\n")


def provenance(machine):
    """Where the ceiling comes from and what the FLOP counts are: every
    report says so. machine is None without a run JSON."""
    if machine is not None:
        config = json_text(machine, "blas_config", "?")
        blas = "OpenBLAS" if config.startswith("OpenBLAS") else "attn's BLAS"
        ceiling = (f"- ceiling: {blas}'s own square `cblas_sgemm` / `cblas_dgemm` (core "
                   f"`{json_text(machine, 'blas_core', '?')}`) on "
                   f"{json_text(machine, 'cpu_model', '?')}, measured at the start of this run "
                   "at each thread count: what this BLAS reaches on its best-case product, "
                   "not the CPU's theoretical peak\n")
    else:
        ceiling = ("- ceiling: attn's BLAS's own square `cblas_sgemm` / `cblas_dgemm`, measured "
                   "at the start of the run (its core and CPU are in the run's JSON, not found "
                   "here); not the CPU's theoretical peak\n")
    peak = ("- FMA peak: a register-only FMA micro-kernel on the row's threads, measured "
            "at the start of this run (the `FMA peak` table): the share column's "
            "denominator\n")
    return ceiling + peak + ("- FLOP counts (GFLOP/s and % of the ceiling of every "
                             f"implementation): {FLOPS_FORMULA}\n")


def machine(run):
    """The machine, BLAS, build, command and load of the run (run: its JSON
    object, or None)."""
    m = json_member(run, "machine")
    if m is None:
        return ("No run JSON was found, so the machine is not described here.\n\n"
                + provenance(None) + "\n")
    t = partial(json_text, m, fallback="?")
    out = (f"Measured {t('started')} on **{t('cpu_model')}** "
           f"({'%g' % json_number(m, 'cpus_online', 0)} CPUs online; SIMD: "
           f"{t('cpu_simd_flags')}) with attn {t('attn_version')}, softmax kernel "
           f"`{t('simd_kernel')}`.\n\n"
           f"- BLAS: {t('blas_config')} (core {t('blas_core')})\n"
           f"- attn-bench built with {t('compiler')}, {t('build_type')}, "
           f"`{t('compile_flags')}`\n"
           f"- system: {t('system')}\n"
           + provenance(m)
           + f"- command: `{json_text(run, 'command', '?')}`\n")
    wall = json_number(run, "wall_seconds", math.nan)
    other = json_number(run, "other_load_cpus", math.nan)
    load = []
    if not math.isnan(wall):
        load.append("wall time %.0f s" % wall)
    if not math.isnan(other):
        load.append("other processes kept %.2f CPUs busy on average%s"
                    % (other, " (timings suffer)" if other > 0.2 else ""))
    if load:
        out += "- " + "; ".join(load) + "\n"
    return out + "\n"


def ceiling(run):
    """The run's GEMM ceiling table; "" when the JSON has none."""
    entries = json_member(run, "ceiling")
    if not isinstance(entries, list) or not entries:
        return ""
    out = ("## Ceiling\n\nOne square GEMM on attn's BLAS at the start of the run (2n³ FLOPs, "
           "median of 5 calls); every GFLOP/s below is also given as a fraction of it.\n\n"
           + table_head(("GEMM", "n", "threads", "GFLOP/s (median)", "GFLOP/s (best)"),
                        "lrrrr"))
    for e in entries:
        out += "| %s | %g | %g | %.1f | %.1f |\n" % (
            json_text(e, "gemm", "?"), json_number(e, "n", 0), json_number(e, "threads", 0),
            json_number(e, "gflops", 0), json_number(e, "best_gflops", 0))
    return out + "\n"


def peers(run):
    """The peers table: versions, build and BLAS, what each computes; ""
    when the JSON has none."""
    entries = json_member(run, "peers")
    if not isinstance(entries, list):
        return ""
    out = "## Peers\n\n" + table_head(
        ("peer", "status", "versions", "build and BLAS", "computes", "note"), "llllll")
    for p in entries:
        name = json_text(p, "name", "?")
        naive = name == "naive"
        out += "| %s | %s | %s | %s | %s | %s |\n" % (
            name, json_text(p, "status", "?"),
            "this build" if naive else json_text(p, "info", ""),
            "no BLAS" if naive else json_text(p, "blas", ""),
            "plain C loops in the element type" if naive else json_text(p, "impl", ""),
            json_text(p, "note", ""))
    return out + "\n"


def cell(value, form):
    """ ' VALUE |' of a number, ' - |' when it was not measured."""
    return " - |" if math.isnan(value) else f" {form % value} |"


def promoted(row, peer):
    """Whether the peer computed in another type than the row's: NumPy's
    float64 out of the lesson's code on f32 rows (CSV PEER_out_dtype)."""
    out_dtype = runs.field(row, f"{peer}_out_dtype")
    own = "float32" if runs.field(row, "dtype") == "f32" else "float64"
    return bool(out_dtype) and out_dtype != own


def fma_peak(run):
    """The run's FMA peak table (its JSON's fma_peak); "" when it has none."""
    peak = json_member(run, "fma_peak")
    entries = json_member(peak, "entries") if peak is not None else None
    if not isinstance(entries, list) or not entries:
        return ""
    out = (f"## FMA peak\n\n{json_text(peak, 'method', '?')} ({json_text(peak, 'isa', '?')} "
           "instructions), at the start of the run: what the cores reach on multiply-adds "
           "alone, the denominator of `% FMA peak`.\n\n"
           + table_head(("kind", "threads", "GFLOP/s (best)", "GFLOP/s (median)"), "lrrr"))
    for e in entries:
        out += "| %s | %g | %.1f | %.1f |\n" % (
            json_text(e, "kind", "?"), json_number(e, "threads", 0),
            json_number(e, "gflops", 0), json_number(e, "median_gflops", 0))
    return out + "\n"


def results(rows):
    """The table of every row: the configuration, the check, attn's time,
    GFLOP/s and its shares of the FMA peak and of the ceiling, the peers' times and
    attn's speedups."""
    columns = (["dtype", "op", "causal", "api/path/engine", "thr", "B", "T", "C", "NH", "hs",
                "wo", "check", "attn ms", "GFLOP/s", "% FMA peak", "% ceiling"]
               + [f"{p} ms" for p in runs.PEERS] + [f"× {p}" for p in runs.PEERS])
    out = "## Results\n\n" + table_head(columns,
                                        "llrlrrrrrrrlrrrr" + "r" * (2 * len(runs.PEERS)))
    any_promoted = False
    for row in rows:
        f, number = partial(runs.field, row), partial(runs.number, row)
        line = "| %s | %s | %s | %s | %s | %s | %.0f | %s | %s | %s | %s | %s |" % (
            f("dtype"), f("op"), f("causal"), figures.variant(row), f("threads"), f("B"),
            number("T"), f("C"), f("NH"), f("hs"), f("wo"), f("check_error") or f("check"))
        line += cell(number("attn_median_ms"), "%.4g")
        line += cell(number("attn_gflops"), "%.1f")
        line += cell(100.0 * number("attn_peak_fraction"), "%.0f%%")
        line += cell(100.0 * number("attn_ceiling_fraction"), "%.0f%%")
        for peer in runs.PEERS:
            line += cell(number(f"{peer}_median_ms"), "%.4g")
        for peer in runs.PEERS:
            speedup = number(f"speedup_vs_{peer}")
            marked = not math.isnan(speedup) and promoted(row, peer)
            line += cell(speedup, "%.2f× †" if marked else "%.2f×")
            any_promoted |= marked
        out += line + "\n"
    out += "\n" + RESULTS_NOTE + "\n\n"
    if any_promoted:
        out += PROMOTED_NOTE + "\n\n"
    return out


def reproduce(run, csv_paths, out_dir):
    """The commands: the run's own (from its JSON), then this report's."""
    out = "## Reproduce\n\n```sh\n"
    if run is not None:
        out += json_text(run, "command", "attn-bench") + "\n"
    return out + f"attn-bench report --csv {','.join(csv_paths)} --out {out_dir}\n```\n"
