#!/usr/bin/env python3
"""Checks attn-bench results against issue 5's performance targets.

Reads the CSVs of attn-bench runs (the sweeps in bench/targets/; each run's
JSON is read from beside its CSV when it is there) and the CSV of
attn-memory, computes the ratio every target is about -- each one from
numbers measured in the same run -- and compares it with the target's
threshold and with a stored baseline (bench/targets/baseline.json, the
ratios measured on the project's machine). Prints a table: case, target,
measured, baseline, status, and how the number was obtained.

Rounds: the CSV files named on the command line form one round; each
directory named is another (its *.csv, by name). Within a round, when a
configuration appears in several CSVs, the one named last wins. With several
rounds each target's ratio is computed within each round and the median is
reported (of an even count, the worse of the middle two).

Status: "meets" or "SHORT" (of the target); then, against the baseline,
"regressed N%" when the ratio is worse than the baseline by more than the
noise margin (--noise, default 15%), "improved N%" when better by more than
it; "noisy run" when the ratio comes from a run during which other
processes kept more than --load-max CPUs busy (attn-bench's JSON
other_load_cpus), or whose 2-thread sgemm rate (the run's ceiling at its
start, and run_targets.sh's probe right after it, NAME.probe.json) fell
below --slow times the best of all runs, or when a timing it uses (attn's
median, or the peer's) ran below --slow times the speed of the same
configuration in its fastest round: the machine then ran slower than it can
for reasons no CPU count inside it shows (on this shared VM, two-thread
timings halve for seconds to minutes while no process in it is busy). Such
ratios are left out when a quiet round has one.

Exit status: 0 (whatever the numbers) unless --strict (1 when a target is
short or could not be measured) or --strict-baseline (1 when a ratio
regressed beyond the noise margin); 2 on bad arguments or unreadable input.
Python 3 standard library only.
"""
import argparse
import datetime
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "report"))
import runs  # noqa: E402  (bench/report/runs.py: the run CSV and JSON reader)
from target_cases import (  # noqa: E402  (the targets and how each is measured)
    Missing,
    Run,
    Data,
    is_memory_csv,
    read_memory,
    describe,
    number,
    ms,
    TARGETS)

DEFAULT_BASELINE = os.path.join(HERE, "baseline.json")
KEY = runs.KEY



# ---- evaluation --------------------------------------------------------------

def format_value(value, unit):
    if value is None:
        return "-"
    if unit == "%":
        return f"{100.0 * value:.1f}%"
    if unit == "MiB":
        return f"{value:.1f} MiB"
    return f"{value:.3g}x" if value < 10 else f"{value:.1f}x"


def choose(values, sense):
    """The median of (value, ...) tuples; of an even count, the worse of the
    middle two."""
    ordered = sorted(values, key=lambda v: v[0])
    n = len(ordered)
    if n % 2:
        return ordered[n // 2]
    return ordered[n // 2 - 1] if sense == ">=" else ordered[n // 2]


def evaluate(rounds, baseline, noise):
    """One result dict per target. With several rounds (each a complete set of
    runs), each round gives the target its own ratio and the median is kept;
    ratios from noisy runs are left out when a quiet round has one."""
    results = []
    for target_id, case, target_text, sense, threshold, unit, compute in TARGETS:
        result = {"id": target_id, "case": case, "target": target_text, "sense": sense,
                  "threshold": threshold, "unit": unit, "measured": None, "detail": "",
                  "rounds": [], "baseline": baseline.get(target_id), "meets": None,
                  "change": None, "regressed": False, "improved": False, "noisy": [],
                  "sweeps": [], "status": ""}
        values, missing, sweeps = [], [], set()
        for data in rounds:
            try:
                value, detail, used = compute(data)
            except Missing as why:
                missing.append(str(why))
                continue
            runs = {row["_run"] for row in used}
            sweeps |= {os.path.splitext(os.path.basename(run.csv_path))[0] for run in runs}
            noisy = sorted(f"{run.name} ({run.noise(data.load_max, data.reference, data.slow)})"
                           for run in runs
                           if run.noise(data.load_max, data.reference, data.slow))
            noisy += [f"{row['_run'].name} ({why})" for row in used
                      for why in [row_noise(row, data.best, data.slow)] if why]
            values.append((value, detail, noisy))
        if not values:
            result["detail"] = missing[0] if missing else "no input"
            result["status"] = "not measured"
            results.append(result)
            continue
        result["sweeps"] = sorted(sweeps)
        quiet = [v for v in values if not v[2]]
        value, detail, noisy = choose(quiet or values, sense)
        result["rounds"] = [v[0] for v in values]
        if len(values) > 1:
            detail += (f" [median of {len(quiet or values)} rounds: "
                       + ", ".join(format_value(v[0], unit) for v in (quiet or values)))
            if quiet and len(quiet) < len(values):
                detail += f"; {len(values) - len(quiet)} noisy left out"
            detail += "]"
        result["measured"] = value
        result["detail"] = detail
        result["noisy"] = noisy
        result["meets"] = value >= threshold if sense == ">=" else value <= threshold
        base = result["baseline"]
        parts = ["meets" if result["meets"] else "SHORT"]
        if isinstance(base, (int, float)) and base > 0 and value > 0:
            # how much worse than the baseline (positive: worse)
            worse = base / value - 1.0 if sense == ">=" else value / base - 1.0
            result["change"] = -worse
            if worse > noise:
                result["regressed"] = True
                parts.append(f"regressed {100 * worse:.0f}%")
            elif worse < -noise:
                result["improved"] = True
                parts.append(f"improved {100 * -worse:.0f}%")
        elif base is None:
            parts.append("no baseline")
        if result["noisy"]:
            parts.append("noisy run")
        result["status"] = ", ".join(parts)
        results.append(result)
    return results


def table_rows(results):
    header = ["case", "target", "measured", "baseline", "status", "how"]
    rows = []
    for r in results:
        how = r["detail"]
        if r["noisy"]:
            how += "; noisy: " + ", ".join(r["noisy"])
        rows.append([r["case"], r["target"], format_value(r["measured"], r["unit"]),
                     format_value(r["baseline"], r["unit"]), r["status"], how])
    return header, rows


def print_table(results, out):
    header, rows = table_rows(results)
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    widths[-1] = 0  # the last column is not padded
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    print(line(header), file=out)
    print(line(["-" * w for w in widths[:-1]] + ["---"]), file=out)
    for row in rows:
        print(line(row), file=out)


def summary(results):
    short = [r["id"] for r in results if r["meets"] is False]
    missing = [r["id"] for r in results if r["measured"] is None]
    regressed = [r["id"] for r in results if r["regressed"]]
    noisy = [r["id"] for r in results if r["noisy"]]
    met = sum(1 for r in results if r["meets"])
    lines = [f"{met} of {len(results)} targets met"]
    if short:
        lines.append("short of target: " + ", ".join(short))
    if missing:
        lines.append("not measured: " + ", ".join(missing))
    if regressed:
        lines.append("regressed vs baseline: " + ", ".join(regressed))
    if noisy:
        lines.append("measured in a noisy run (re-run those sweeps): " + ", ".join(noisy))
    return lines


def machine_lines(runs):
    lines = []
    first = next((run.json for run in runs if run.json), None)
    if first:
        m = first.get("machine", {})
        lines.append(f"{m.get('cpu_model', '?')}, {m.get('cpus_online', '?')} CPUs; "
                     f"{m.get('blas_config', '?')}; {m.get('compiler', '?')} "
                     f"{m.get('compile_flags', '')}; attn {m.get('attn_version', '?')} "
                     f"({m.get('simd_kernel', '?')} softmax)")
        peers = {}
        for run in runs:
            for peer in (run.json or {}).get("peers", []):
                if peer.get("status") == "ran" and peer.get("info"):
                    peers[peer["name"]] = peer["info"]
        if peers:
            lines.append("peers: " + "; ".join(f"{k} ({v})" for k, v in sorted(peers.items())))
    for run in runs:
        if not run.json:
            lines.append(f"{run.name}: no JSON beside it (load unknown)")
            continue
        ceilings = ", ".join(f"{c.get('gemm')} {c.get('threads')}thr {c.get('gflops')} GFLOP/s"
                             for c in run.json.get("ceiling", []))
        load = run.other_load
        load_text = "?" if load is None else f"{load:.2f}"
        probe = [c.get("gflops") for c in (run.probe_json or {}).get("ceiling", []) or []
                 if c.get("dtype") == "f32"]
        probe_text = f"; sgemm after it {probe[0]} GFLOP/s" if probe else ""
        lines.append(f"{run.name}: started {run.json.get('machine', {}).get('started', '?')}, "
                     f"other processes {load_text} CPUs busy; ceiling {ceilings}{probe_text}")
    return lines


def write_markdown(path, results, runs, memory_path, noise):
    header, rows = table_rows(results)
    def cell(text):
        return str(text).replace("|", "\\|")
    out = ["# Issue 5 performance targets: measured", ""]
    out.append("Written by `bench/targets/check_targets.py` from the runs below "
               "(`bench/targets/run_targets.sh`). Every ratio is taken within one "
               "attn-bench run: medians of repeated calls, both cores (`--threads 2`) "
               "unless the row says otherwise, f32 unless it says f64. "
               f"Baseline: `bench/targets/baseline.json`; a ratio more than {100 * noise:.0f}% "
               "worse than it is a regression.")
    out.append("")
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    for row in rows:
        out.append("| " + " | ".join(cell(c) for c in row) + " |")
    out.append("")
    for line in summary(results):
        out.append(f"- {line}")
    out.append("")
    out.append("Runs:")
    out.append("")
    for line in machine_lines(runs):
        out.append(f"- {line}")
    if memory_path:
        out.append(f"- memory: {os.path.basename(memory_path)} (attn-memory)")
    out.append("")
    with open(path, "w") as handle:
        handle.write("\n".join(out))


def write_baseline(path, results, runs):
    first = next((run.json for run in runs if run.json), None) or {}
    machine = first.get("machine", {})
    document = {
        "tool": "bench/targets/check_targets.py",
        "schema": 1,
        "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {k: machine.get(k) for k in ("cpu_model", "cpus_online", "blas_config",
                                                 "compiler", "attn_version", "simd_kernel")},
        "runs": [run.name for run in runs],
        "ratios": {r["id"]: round(r["measured"], 6) for r in results if r["measured"] is not None},
    }
    with open(path, "w") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")


def load_baseline(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path) as handle:
        document = json.load(handle)
    ratios = document.get("ratios", {})
    return {k: v for k, v in ratios.items() if isinstance(v, (int, float))}


TIMED = ("attn_median_ms", "numpy_median_ms", "torch_median_ms")


def timed_values(row):
    """(column, value) for each TIMED column of a row that holds a number
    (nan where it is empty)."""
    for column in TIMED:
        try:
            yield column, float(row.get(column) or "nan")
        except ValueError:
            continue


def row_noise(row, best, slow):
    """Why a row's timings are suspect, or None: attn's or a peer's median is
    below slow x the speed of the same configuration's best round (other work
    only ever slows a timing down)."""
    key = tuple(row[k] for k in KEY)
    for column, value in timed_values(row):
        fastest = best.get((key, column))
        if fastest and math.isfinite(value) and value > 0 and fastest / value < slow:
            who = column.split("_")[0]
            return (f"{who} {value:.4g} ms on {describe(row)}, {100 * fastest / value:.0f}% "
                    "of its best round's speed")
    return None


def load_rounds(inputs, memory_path, load_max, slow=0.8):
    """Rounds (Data) from the command line's inputs: the CSV files named
    directly form one round, each directory another. Memory rows go with the
    round they were found in; --memory's with the first round."""
    file_runs, file_memory, dir_rounds = [], [], []
    for path in inputs:
        if os.path.isdir(path):
            runs, memory_rows = [], []
            label = os.path.basename(os.path.normpath(path))
            for name in sorted(os.listdir(path)):
                full = os.path.join(path, name)
                if not name.endswith(".csv") or not os.path.isfile(full):
                    continue
                if is_memory_csv(full):
                    memory_rows += read_memory(full)
                else:
                    runs.append(Run(full, f"{label}/{name}"))
            if not runs and not memory_rows:
                raise ValueError(f"{path}: no CSV in this directory")
            dir_rounds.append((runs, memory_rows))
        elif is_memory_csv(path):
            file_memory += read_memory(path)
        else:
            file_runs.append(Run(path))
    if memory_path:
        file_memory += read_memory(memory_path)
    rounds = []
    if file_runs or file_memory or not dir_rounds:
        rounds.append((file_runs, file_memory))
    rounds += dir_rounds
    if len(rounds) > 1 and not rounds[0][0]:  # --memory alone beside directories
        rounds[1] = (rounds[1][0], rounds[0][1] + rounds[1][1])
        rounds.pop(0)
    rates = [rate for runs, _ in rounds for run in runs for rate in run.gemm_rates()]
    reference = max(rates) if rates else None
    # The fastest median of each configuration over the rounds, from the runs
    # that are not noisy themselves (when there are such runs).
    every = [run for runs, _ in rounds for run in runs]
    clean = [run for run in every if not run.noise(load_max, reference, slow)] or every
    best = {}
    for run in clean:
        for row in run.rows:
            if row["status"] != "timed":
                continue
            key = tuple(row[k] for k in KEY)
            for column, value in timed_values(row):
                if math.isfinite(value) and value > 0:
                    best[(key, column)] = min(value, best.get((key, column), math.inf))
    if len(rounds) < 2:
        best = {}
    return [Data(runs, memory_rows, load_max, reference, slow, best)
            for runs, memory_rows in rounds]


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See bench/targets/README.md.")
    parser.add_argument("inputs", nargs="*", metavar="CSV|DIR",
                        help="attn-bench CSVs, together one round (the one named last wins on "
                             "a configuration they share); or directories, each one round "
                             "(its *.csv by name); attn-memory CSVs are told by their header")
    parser.add_argument("--memory", help="attn-memory's CSV")
    parser.add_argument("--baseline", default=DEFAULT_BASELINE,
                        help="stored ratios to compare with (default: %(default)s; "
                             "'none' for none)")
    parser.add_argument("--noise", type=float, default=0.15,
                        help="regression margin against the baseline (default: %(default)s)")
    parser.add_argument("--load-max", type=float, default=0.05,
                        help="a run whose other processes kept more CPUs busy is noisy "
                             "(default: %(default)s)")
    parser.add_argument("--slow", type=float, default=0.8,
                        help="a run whose 2-thread sgemm (its ceiling, or the probe after it) "
                             "ran below this fraction of the best run's, or a row whose attn "
                             "or peer median ran below this fraction of the speed of the "
                             "same configuration's best round, is noisy (default: "
                             "%(default)s; 0: never)")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--results-json", metavar="FILE",
                        help="also write every result as JSON")
    parser.add_argument("--write-baseline", nargs="?", const=DEFAULT_BASELINE, metavar="FILE",
                        help="store the measured ratios as the baseline (default file: "
                             "%(const)s)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a target is short or not measured")
    parser.add_argument("--strict-baseline", action="store_true",
                        help="exit 1 when a ratio regressed beyond --noise")
    args = parser.parse_args(argv)
    if not args.inputs and not args.memory:
        parser.error("no input: give attn-bench CSVs and/or --memory")
    if not 0.0 <= args.noise < 10.0:
        parser.error("--noise must be in [0, 10)")

    try:
        rounds = load_rounds(args.inputs, args.memory, args.load_max, args.slow)
        baseline = {} if args.baseline == "none" else load_baseline(args.baseline)
    except (OSError, ValueError) as error:
        print(f"check_targets.py: {error}", file=sys.stderr)
        return 2
    runs = [run for data in rounds for run in data.runs]

    results = evaluate(rounds, baseline, args.noise)
    if len(rounds) > 1:
        print(f"# {len(rounds)} rounds: each target's ratio is the median over them")
    for line in machine_lines(runs):
        print(f"# {line}")
    print_table(results, sys.stdout)
    for line in summary(results):
        print(f"# {line}")

    if args.markdown:
        write_markdown(args.markdown, results, runs, args.memory, args.noise)
    if args.results_json:
        with open(args.results_json, "w") as handle:
            json.dump(results, handle, indent=2)
            handle.write("\n")
    if args.write_baseline:
        write_baseline(args.write_baseline, results, runs)
        print(f"# baseline written: {args.write_baseline}")

    failed = False
    if args.strict and any(not r["meets"] for r in results):
        failed = True
    if args.strict_baseline and any(r["regressed"] for r in results):
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
