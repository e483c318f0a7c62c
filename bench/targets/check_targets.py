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
import csv
import datetime
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "report"))
import runs  # noqa: E402  (bench/report/runs.py: the run CSV and JSON reader)

MIB = 1024.0 * 1024.0
DEFAULT_BASELINE = os.path.join(HERE, "baseline.json")
KEY = runs.KEY


class Missing(Exception):
    """A target's inputs are not in the CSVs (or were not timed)."""


# ---- inputs ------------------------------------------------------------------

class Run:
    """One attn-bench run: its CSV rows and, when found, its JSON."""

    def __init__(self, csv_path, label=None):
        self.csv_path = csv_path
        self.name = label or os.path.basename(csv_path)
        self.rows = runs.read_rows(csv_path)
        for row in self.rows:
            row["_run"] = self
        self.json = runs.read_json_if_there(runs.json_path_beside(csv_path))
        # run_targets.sh's GEMM probe
        self.probe_json = runs.read_json_if_there(runs.json_path_beside(csv_path, ".probe.json"))

    @property
    def other_load(self):
        if not self.json:
            return None
        value = self.json.get("other_load_cpus")
        return value if isinstance(value, (int, float)) else None

    def gemm_rates(self):
        """The 2-thread sgemm (n = 2048) rates measured around this run: its
        ceiling (at its start) and run_targets.sh's probe (right after it)."""
        rates = []
        for document in (self.json, self.probe_json):
            for c in (document or {}).get("ceiling", []) or []:
                if (c.get("dtype") == "f32" and c.get("threads") == 2 and c.get("n") == 2048
                        and isinstance(c.get("gflops"), (int, float))):
                    rates.append(float(c["gflops"]))
        return rates

    def noise(self, load_max, reference, slow):
        """Why this run's timings are suspect, or None: other processes kept
        more than load_max CPUs busy, or the 2-thread sgemm measured around it
        ran below slow x the best of every run (the machine ran slower than it
        can, e.g. a neighbour on the host, which no CPU count inside shows)."""
        reasons = []
        if self.other_load is not None and self.other_load > load_max:
            reasons.append(f"{self.other_load:.2f} CPUs busy")
        rates = self.gemm_rates()
        if reference and rates and min(rates) < slow * reference:
            reasons.append(f"sgemm at {100 * min(rates) / reference:.0f}% of the best run's")
        return ", ".join(reasons) or None


class Data:
    """One round: its runs' rows, by configuration (the CSV named last wins),
    and the memory measurements."""

    def __init__(self, runs, memory_rows, load_max, reference=None, slow=0.8, best=None):
        self.runs = runs
        self.reference = reference
        self.slow = slow
        self.best = best or {}
        self.by_key = {}
        for run in runs:
            for row in run.rows:
                self.by_key[tuple(row[k] for k in KEY)] = row
        self.memory_rows = memory_rows
        self.load_max = load_max

    def row(self, dtype="f32", op="forward", causal=0, api="plan", path="auto", engine="auto",
            threads=2, B=1, T=1, C=1, NH=1, hs=64, wo=0, weights=0):
        key = tuple(str(v) for v in (dtype, op, causal, api, path, engine, threads, B, T, C, NH,
                                     hs, wo, weights))
        row = self.by_key.get(key)
        label = describe(dict(zip(KEY, key)))
        if row is None:
            raise Missing(f"no row {label}")
        if row["status"] != "timed":
            raise Missing(f"{label}: {row['status']}")
        return row


def is_memory_csv(path):
    """attn-memory's CSV (else attn-bench's, or something else)?"""
    with open(path, newline="") as handle:
        header = handle.readline()
    return "extra_bytes" in header.strip().split(",")


def read_memory(path):
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        need = ("dtype", "T", "hs", "NH", "B", "path", "status", "extra_bytes")
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not an attn-memory CSV (no {', '.join(missing)})")
        return [row for row in reader if row.get("status") is not None]


def describe(fields):
    """A short label for a configuration."""
    shape = f"B={fields['B']} T={fields['T']} C={fields['C']}"
    shape += f" NH={fields['NH']}" if str(fields["NH"]) != "1" else f" hs={fields['hs']}"
    extra = [fields["dtype"], fields["op"], f"c={fields['causal']}", fields["api"]]
    if fields["path"] != "auto":
        extra.append(fields["path"])
    if str(fields["wo"]) == "1":
        extra.append("Wo")
    if fields.get("engine", "auto") != "auto" and fields["api"] == "plan":
        extra.append(f"engine={fields['engine']}")
    extra.append(f"{fields['threads']}thr")
    return f"{' '.join(extra)} {shape}"


def number(row, column):
    value = runs.number(row, column)
    if not math.isfinite(value):
        raise Missing(f"{column} is empty in {describe(row)}")
    return value


def peer_speedup(row, peer):
    """Peer median / attn median, from the medians (the speedup column has
    4 digits)."""
    note = row.get(f"{peer}_note") or ""
    if not row.get(f"{peer}_median_ms"):
        raise Missing(f"{peer} not measured on {describe(row)}" + (f": {note}" if note else ""))
    return number(row, f"{peer}_median_ms") / number(row, "attn_median_ms")


def ms(row):
    return number(row, "attn_median_ms")


def fmt_ms(value):
    return f"{value:.4g} ms"


# ---- the targets -------------------------------------------------------------
# Each compute(data) returns (value, detail, rows used) or raises Missing.

def course(api):
    def compute(d):
        r = d.row(T=6, C=64, hs=16, api=api)
        v = peer_speedup(r, "numpy")
        return v, f"NumPy {fmt_ms(number(r, 'numpy_median_ms'))} / attn {fmt_ms(ms(r))}", [r]
    return compute


def head_ceiling(dtype):
    def compute(d):
        r = d.row(dtype=dtype, T=1024, C=768, hs=64)
        gemm = "sgemm" if dtype == "f32" else "dgemm"
        return (number(r, "attn_ceiling_fraction"),
                f"{number(r, 'attn_gflops'):.1f} of {number(r, 'ceiling_gflops'):.1f} GFLOP/s "
                f"({gemm}, 2 threads)", [r])
    return compute


def head_numpy(d):
    r = d.row(T=1024, C=768, hs=64)
    return (peer_speedup(r, "numpy"),
            f"NumPy {fmt_ms(number(r, 'numpy_median_ms'))} / attn {fmt_ms(ms(r))}", [r])


def long_numpy(d):
    r = d.row(T=4096, C=1024, hs=64, causal=1)
    return (peer_speedup(r, "numpy"),
            f"NumPy {fmt_ms(number(r, 'numpy_median_ms'))} / attn {fmt_ms(ms(r))}", [r])


def long_causal(d):
    c1 = d.row(T=4096, C=1024, hs=64, causal=1)
    c0 = d.row(T=4096, C=1024, hs=64, causal=0)
    return ms(c1) / ms(c0), f"causal {fmt_ms(ms(c1))} / non-causal {fmt_ms(ms(c0))}", [c1, c0]


def ran_on(row):
    """The engine a row ran on (engine_threads): 'own x2' or 'BLAS threads'."""
    threads = row.get("engine_threads") or ""
    if not threads:
        return "?"
    return "BLAS threads" if threads == "0" else f"own x{threads}"


def engine_of(row):
    """ran_on, prefixed with 'auto = ' when the plan was at its default (just
    the engine's name when the CSV has no engine_threads)."""
    if not row.get("engine_threads"):
        return row.get("engine", "?")
    return f"auto = {ran_on(row)}" if row.get("engine") == "auto" else ran_on(row)


def case_label(case):
    """'fwd c=1' for dict(op="forward", causal=1)."""
    parts = []
    if "op" in case:
        parts.append("fwd" if case["op"] == "forward" else "fwd+bwd")
    if "causal" in case:
        parts.append(f"c={case['causal']}")
    return " ".join(parts)


def worst_of(cases, one, sense, what):
    """The worst ratio of one(data, case) -> (ratio, detail, rows) over the
    cases: the highest when lower is better (sense '<='), else the lowest."""
    def compute(d):
        worst, details, used = None, [], []
        for case in cases:
            ratio, detail, rows = one(d, case)
            if worst is None or (ratio < worst if sense == ">=" else ratio > worst):
                worst = ratio
            details.append(f"{case_label(case)}: {detail}")
            used += rows
        return worst, "worst of " + ", ".join(details) + what, used
    return compute


def torch_ratio(op, causal, **shape):
    """PyTorch / attn on one shape (the plan at its default engine)."""
    def compute(d):
        r = d.row(op=op, causal=causal, **shape)
        return (peer_speedup(r, "torch"),
                f"PyTorch {fmt_ms(number(r, 'torch_median_ms'))} / attn {fmt_ms(ms(r))} "
                f"({engine_of(r)})", [r])
    return compute


def torch_worst(op, **shape):
    """The worse PyTorch / attn ratio of causal 0 and 1."""
    def one(d, case):
        r = d.row(op=op, **case, **shape)
        return (peer_speedup(r, "torch"),
                f"{number(r, 'torch_median_ms'):.4g}/{ms(r):.4g} ms", [r])
    return worst_of([dict(causal=0), dict(causal=1)], one, ">=", " (PyTorch/attn)")


def ceiling_fraction(**shape):
    def compute(d):
        r = d.row(**shape)
        return (number(r, "attn_ceiling_fraction"),
                f"{number(r, 'attn_gflops'):.1f} of {number(r, 'ceiling_gflops'):.1f} GFLOP/s "
                f"(sgemm, {r['threads']} threads; {engine_of(r)})", [r])
    return compute


def auto_vs_best(cases, **shape):
    """t(engine auto) / min(t(blas), t(own)), the worst over the cases (dicts
    of the fields that vary: op, causal)."""
    def one(d, case):
        auto = d.row(engine="auto", **case, **shape)
        explicit = [d.row(engine=e, **case, **shape) for e in ("blas", "own")]
        best = min(explicit, key=ms)
        return (ms(auto) / ms(best),
                f"auto ({ran_on(auto)}) {ms(auto):.4g} / {best['engine']} {ms(best):.4g} ms",
                [auto] + explicit)
    return worst_of(cases, one, "<=", "")


def oneshot_vs_plan(cases, **shape):
    """t(one-shot) / t(plan), both at the default engine, the worst over cases."""
    def one(d, case):
        plan = d.row(api="plan", **case, **shape)
        oneshot = d.row(api="oneshot", **case, **shape)
        return ms(oneshot) / ms(plan), f"{ms(oneshot):.4g}/{ms(plan):.4g} ms", [oneshot, plan]
    return worst_of(cases, one, "<=", " (one-shot/plan)")


def memory(dtype, T, hs):
    def compute(d):
        rows = [m for m in d.memory_rows if m["dtype"] == dtype and m["T"] == str(T)
                and m["hs"] == str(hs) and m["NH"] == "1" and m["B"] == "1"
                and m["path"] == "auto"]
        if not rows:
            raise Missing(f"no attn-memory row {dtype} T={T} hs={hs} path=auto"
                          + ("" if d.memory_rows else " (no --memory CSV)"))
        m = rows[-1]
        if m["status"] != "ok":
            raise Missing(f"attn-memory {dtype} T={T}: {m['status']}")
        extra = float(m["extra_bytes"]) / MIB
        parts = []
        for column, label in (("plan_bytes", "plan"), ("peak_rss_extra_bytes", "peak RSS +"),
                              ("forward_heap_bytes", "forward heap +")):
            if m.get(column):
                parts.append(f"{label} {float(m[column]) / MIB:.2f} MiB")
        parts.append(f"{m['ran_path']} path, C={m['C']}")
        return extra, ", ".join(parts), []
    return compute


def tiled_vs_materialized(T):
    def one(d, case):
        t = d.row(T=T, C=64, hs=64, path="tiled", **case)
        m = d.row(T=T, C=64, hs=64, path="materialized", **case)
        return ms(t) / ms(m), f"{ms(t):.4g}/{ms(m):.4g} ms", [t, m]
    return worst_of([dict(causal=0), dict(causal=1)], one, "<=", " (tiled/materialized)")


def backward(**shape):
    def compute(d):
        fwd = d.row(op="forward", **shape)
        both = d.row(op="backward", **shape)
        ratio = (ms(both) - ms(fwd)) / ms(fwd)
        return (ratio, f"(fwd+bwd {fmt_ms(ms(both))} - fwd {fmt_ms(ms(fwd))}) / fwd",
                [fwd, both])
    return compute


def threads(op, **shape):
    def compute(d):
        one = d.row(op=op, threads=1, **shape)
        two = d.row(op=op, threads=2, **shape)
        return ms(one) / ms(two), f"1 thread {fmt_ms(ms(one))} / 2 threads {fmt_ms(ms(two))}", \
            [one, two]
    return compute


SMALL_1 = dict(B=1, T=128, C=512, NH=8, hs=64, causal=1, wo=1, engine="own")
SMALL_2 = dict(B=4, T=64, C=256, NH=4, hs=64, causal=1, wo=1, engine="own")
GPT2 = dict(B=1, T=1024, C=768, NH=12, hs=64, wo=1)
GPT2_B8 = dict(B=8, T=512, C=768, NH=12, hs=64, wo=1)
HEAD4096 = dict(B=1, T=4096, C=768, hs=64)
ONESHOT256 = dict(B=1, T=256, C=768, NH=12, hs=64, causal=1, wo=1)
BOTH_OPS = [dict(op="forward"), dict(op="backward")]
BOTH_OPS_C1 = [dict(op="forward", causal=1), dict(op="backward", causal=1)]
EVERY_HEAD4096 = [dict(op=op, causal=c) for op in ("forward", "backward") for c in (0, 1)]

# id, case, target text, sense ('>=' higher is better, '<=' lower is better),
# threshold, unit ('x', '%', 'MiB'), compute
TARGETS = [
    ("course_plan_vs_numpy", "course shape B=1 T=6 C=64 hs=16, plan forward",
     ">= 25x NumPy", ">=", 25.0, "x", course("plan")),
    ("course_oneshot_vs_numpy", "course shape B=1 T=6 C=64 hs=16, one-shot forward",
     ">= 15x NumPy", ">=", 15.0, "x", course("oneshot")),
    ("head_f32_ceiling", "single head B=1 T=1024 C=768 hs=64, plan forward",
     ">= 70% of sgemm", ">=", 0.70, "%", head_ceiling("f32")),
    ("head_f32_vs_numpy", "single head B=1 T=1024 C=768 hs=64, plan forward",
     ">= 2x NumPy", ">=", 2.0, "x", head_numpy),
    ("head4096_causal_vs_numpy", "single head B=1 T=4096 C=1024 hs=64, causal forward",
     ">= 8x NumPy", ">=", 8.0, "x", long_numpy),
    ("head4096_causal_time", "single head B=1 T=4096 C=1024 hs=64, causal / non-causal time",
     "<= 0.6x", "<=", 0.6, "x", long_causal),
    ("gpt2_forward_vs_torch", "GPT-2 block B=1 T=1024 C=768 NH=12 causal +Wo, forward",
     ">= 1.2x PyTorch", ">=", 1.2, "x", torch_ratio("forward", 1, **GPT2)),
    ("gpt2_fwdbwd_vs_torch", "GPT-2 block B=1 T=1024 C=768 NH=12 causal +Wo, forward+backward",
     ">= 1.25x PyTorch", ">=", 1.25, "x", torch_ratio("backward", 1, **GPT2)),
    ("long_memory_f32_T16384", "long sequence T=16384 hs=64 one head, inference forward memory",
     "<= 32 MiB extra", "<=", 32.0, "MiB", memory("f32", 16384, 64)),
    ("tiled_time_T1024", "long sequences T=1024 C=64 hs=64: tiled / materialized time",
     "<= 1.10x", "<=", 1.10, "x", tiled_vs_materialized(1024)),
    ("tiled_time_T2048", "long sequences T=2048 C=64 hs=64: tiled / materialized time",
     "<= 1.10x", "<=", 1.10, "x", tiled_vs_materialized(2048)),
    ("tiled_time_T4096", "long sequences T=4096 C=64 hs=64: tiled / materialized time",
     "<= 1.10x", "<=", 1.10, "x", tiled_vs_materialized(4096)),
    ("backward_head_c0", "backward / forward time, single head T=1024 C=768 hs=64",
     "<= 2.5x", "<=", 2.5, "x", backward(T=1024, C=768, hs=64, causal=0)),
    ("backward_head_c1", "backward / forward time, single head T=1024 C=768 hs=64 causal",
     "<= 2.5x", "<=", 2.5, "x", backward(T=1024, C=768, hs=64, causal=1)),
    ("backward_gpt2", "backward / forward time, GPT-2 block T=1024 NH=12 causal +Wo",
     "<= 2.5x", "<=", 2.5, "x", backward(T=1024, C=768, NH=12, hs=64, causal=1, wo=1)),
    ("threads_small1_forward", "2 vs 1 thread, B=1 T=128 C=512 NH=8 causal +Wo, forward",
     ">= 1.6x", ">=", 1.6, "x", threads("forward", **SMALL_1)),
    ("threads_small1_fwdbwd", "2 vs 1 thread, B=1 T=128 C=512 NH=8 causal +Wo, fwd+bwd",
     ">= 1.6x", ">=", 1.6, "x", threads("backward", **SMALL_1)),
    ("threads_small2_forward", "2 vs 1 thread, B=4 T=64 C=256 NH=4 causal +Wo, forward",
     ">= 1.6x", ">=", 1.6, "x", threads("forward", **SMALL_2)),
    ("threads_small2_fwdbwd", "2 vs 1 thread, B=4 T=64 C=256 NH=4 causal +Wo, fwd+bwd",
     ">= 1.6x", ">=", 1.6, "x", threads("backward", **SMALL_2)),
    ("head_f64_ceiling", "f64 single head B=1 T=1024 C=768 hs=64, plan forward",
     ">= 70% of dgemm", ">=", 0.70, "%", head_ceiling("f64")),
    # PyTorch 2.x, plans at their default engine (auto)
    ("gpt2_b8_forward_vs_torch", "GPT-2 block B=8 T=512 C=768 NH=12 causal +Wo, forward",
     ">= 1.2x PyTorch", ">=", 1.2, "x", torch_ratio("forward", 1, **GPT2_B8)),
    ("head4096_forward_vs_torch", "one head B=1 T=4096 C=768 hs=64, forward",
     ">= 1.2x PyTorch", ">=", 1.2, "x", torch_ratio("forward", 0, **HEAD4096)),
    ("head4096_causal_forward_vs_torch", "one head B=1 T=4096 C=768 hs=64, causal forward",
     ">= 1.5x PyTorch", ">=", 1.5, "x", torch_ratio("forward", 1, **HEAD4096)),
    ("head4096_fwdbwd_vs_torch", "one head B=1 T=4096 C=768 hs=64, forward+backward "
     "(worse of causal 0, 1)", ">= 1.5x PyTorch", ">=", 1.5, "x",
     torch_worst("backward", **HEAD4096)),
    ("gpt2_forward_ceiling", "GPT-2 block B=1 T=1024 C=768 NH=12 causal +Wo, forward",
     ">= 85% of sgemm", ">=", 0.85, "%", ceiling_fraction(op="forward", causal=1, **GPT2)),
    ("auto_vs_best_gpt2", "default engine / best of blas, own: GPT-2 block T=1024, fwd and "
     "fwd+bwd", "<= 1.05x", "<=", 1.05, "x", auto_vs_best(BOTH_OPS_C1, **GPT2)),
    ("auto_vs_best_gpt2_b8", "default engine / best of blas, own: GPT-2 block B=8 T=512, "
     "forward", "<= 1.05x", "<=", 1.05, "x",
     auto_vs_best([dict(op="forward", causal=1)], **GPT2_B8)),
    ("auto_vs_best_head4096", "default engine / best of blas, own: one head T=4096 C=768, "
     "fwd and fwd+bwd, causal 0, 1", "<= 1.05x", "<=", 1.05, "x",
     auto_vs_best(EVERY_HEAD4096, **HEAD4096)),
    ("oneshot_T256", "one-shot / plan time, B=1 T=256 C=768 NH=12 causal +Wo, fwd and fwd+bwd",
     "<= 1.10x", "<=", 1.10, "x", oneshot_vs_plan(BOTH_OPS, **ONESHOT256)),
    ("oneshot_T1024", "one-shot / plan time, GPT-2 block T=1024, fwd and fwd+bwd",
     "<= 1.10x", "<=", 1.10, "x", oneshot_vs_plan(BOTH_OPS_C1, **GPT2)),
    ("oneshot_T4096", "one-shot / plan time, one head T=4096 C=768 hs=64, forward, "
     "causal 0, 1", "<= 1.10x", "<=", 1.10, "x",
     oneshot_vs_plan([dict(causal=0), dict(causal=1)], op="forward", **HEAD4096)),
]


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
