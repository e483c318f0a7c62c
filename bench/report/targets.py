"""report.py --targets DIR: issue 5's table of performance targets from the
runs bench/targets/run_targets.sh left in DIR, written to targets.md by that
script's checker (bench/targets/check_targets.py, against the stored
baseline): `run_targets.sh --out DIR --check-only -- --markdown FILE`, the
same table `run_targets.sh --check-only` prints.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Beside this folder, in the source tree (bench/targets) as installed
# (share/attn/targets).
RUNNER = os.path.join(os.path.dirname(HERE), "targets", "run_targets.sh")


def write_table(run_dir, out_dir):
    """Prints the table and writes out_dir/targets.md. Returns 0, or 1 (the
    reason on stderr)."""
    markdown = os.path.join(out_dir, "targets.md")
    sys.stdout.flush()
    try:
        status = subprocess.call(["sh", RUNNER, "--out", run_dir, "--check-only", "--",
                                  "--markdown", markdown])
    except OSError as error:
        print(f"attn-bench report: cannot run {RUNNER}: {error}", file=sys.stderr)
        return 1
    if status != 0:
        print(f"attn-bench report: the target check failed ({RUNNER})", file=sys.stderr)
        return 1
    print(f"# targets: {markdown}")
    return 0
