#!/usr/bin/env python3
"""attn-bench report: a Markdown summary (report.md) and PNG plots of
attn-bench runs, from their CSVs and the run's JSON; or, with --targets DIR,
issue 5's table of performance targets (targets.md).

`attn-bench report [OPTIONS] [CSV ...]` runs this tool with its options
(`attn-bench help report` describes them and the outputs); it runs the same
directly: python3 bench/report/report.py --csv run.csv --out DIR.
Standard library, and matplotlib for the plots (without it report.md says
so). Exit status: 0 written; 1 a CSV could not be read or an output could
not be written; 2 bad arguments.
"""
import argparse
import os
import sys

import figures
import plots
import runs
import sections
import targets

PROG = "attn-bench report"
DEFAULT_CSV = "attn-bench.csv"
PLOTS_INTRO = ("## Plots\n\nAgainst T, one panel per shape: solid lines are attn's variants "
               "(api/path), dashed lines the peers.\n\n")


class Failed(Exception):
    """The report cannot be written (the reason is the message)."""


def parse_arguments(argv):
    """The options; exits 2 (argparse) on bad ones."""
    parser = argparse.ArgumentParser(
        prog=PROG, allow_abbrev=False,
        description="A Markdown summary and PNG plots of attn-bench runs.",
        epilog="See `attn-bench help report` and bench/report/README.md.")
    parser.add_argument("csvs", nargs="*", metavar="CSV", help="run CSVs (before --csv's)")
    parser.add_argument("--csv", metavar="LIST",
                        help=f"run CSVs, comma-separated (default: {DEFAULT_CSV} when no CSV "
                             "argument is given); their rows are reported together")
    parser.add_argument("--json", metavar="PATH",
                        help="the run's JSON, for the machine's description (default: the "
                             "first CSV's name with .json, when it exists)")
    parser.add_argument("--out", metavar="DIR", default=".",
                        help="folder of report.md and the PNG plots (created if needed)")
    parser.add_argument("--targets", metavar="DIR",
                        help="the output folder of bench/targets/run_targets.sh: write "
                             "targets.md instead of report.md")
    args = parser.parse_args(argv)
    if args.csv is not None or not args.csvs:
        args.csvs += (DEFAULT_CSV if args.csv is None else args.csv).split(",")
    args.csvs = [path for path in args.csvs if path]
    if not args.csvs and not args.targets:
        parser.error("no CSV given")
    return args


def default_json(csv_path):
    """NAME.json beside NAME.csv when it is readable, else None."""
    if not csv_path.endswith(".csv"):
        return None
    path = runs.json_path_beside(csv_path)
    return path if os.access(path, os.R_OK) else None


def load_rows(csv_paths):
    """Every row of the CSVs, in order. Raises Failed."""
    rows = []
    for path in csv_paths:
        try:
            rows += runs.read_rows(path)
        except runs.NotARunCSV as error:
            raise Failed(str(error)) from error
        except OSError as error:
            raise Failed(f"{path}: {error.strerror or error}") from error
    return rows


def load_run(json_path):
    """The run's JSON object, or None (missing; unreadable: said on stderr)."""
    if json_path is None:
        return None
    try:
        run = runs.read_json(json_path)
        if not isinstance(run, dict):
            raise ValueError("not a JSON object")
        return run
    except OSError as error:
        reason = error.strerror or str(error)
    except ValueError as error:
        reason = str(error)
    print(f"{PROG}: {json_path}: {reason} (the machine is left out)", file=sys.stderr)
    return None


def plots_section(rows, out_dir, log):
    """Draws the figures into out_dir; returns (the Markdown, whether every
    figure was written)."""
    text = PLOTS_INTRO
    if not plots.available():
        print("# report: no plots: matplotlib not found (Debian package python3-matplotlib)",
              file=log)
        return text + ("*No plots: matplotlib was not found (Debian: `apt-get install "
                       "python3-matplotlib`; or `pip install matplotlib`).*\n\n"), True
    if not rows:
        return text + "*No plots: the CSVs have no rows.*\n\n", True
    written = True
    for kind in figures.KINDS:
        for name, figure in figures.figures(rows, kind):
            figure["path"] = os.path.join(out_dir, name)
            try:
                plots.draw(figure)
            except (OSError, ValueError, RuntimeError) as error:
                print(f"{PROG}: {figure['path']}: {error}", file=sys.stderr)
                written = False
                continue
            text += f"![{kind.title}]({name})\n\n"
            print(f"# report: {figure['path']}", file=log)
    return text, written


def write_report(csv_paths, json_path, out_dir, log=sys.stdout):
    """Writes out_dir/report.md and the plots of the CSVs (json_path None:
    the first CSV's NAME.json when there is one). Returns the exit status."""
    try:
        rows = load_rows(csv_paths)
        run = load_run(json_path if json_path is not None else default_json(csv_paths[0]))
        os.makedirs(out_dir, exist_ok=True)
        plot_text, drawn = plots_section(rows, out_dir, log)
        text = ("# attn-bench results\n\n" + sections.machine(run) + sections.fma_peak(run)
                + sections.ceiling(run)
                + sections.peers(run) + plot_text + sections.results(rows)
                + sections.reproduce(run, csv_paths, out_dir))
        path = os.path.join(out_dir, "report.md")
        with open(path, "w") as handle:
            handle.write(text)
    except (Failed, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    print(f"# report: {path} ({len(rows)} rows)", file=log)
    return 0 if drawn else 1


def main(argv=None):
    args = parse_arguments(argv)
    if args.targets:
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as error:
            print(f"{PROG}: {error}", file=sys.stderr)
            return 1
        return targets.write_table(args.targets, args.out)
    return write_report(args.csvs, args.json, args.out)


if __name__ == "__main__":
    sys.exit(main())
