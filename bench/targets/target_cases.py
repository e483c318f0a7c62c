"""The targets check_targets.py evaluates (bench/targets/README.md): the
runs and rounds it reads (Run, Data), how each ratio is obtained from one
round's rows, and the table of targets, TARGETS: (case, target, threshold,
sense, unit, measure). Python 3 standard library only.
"""
import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "report"))
import runs  # noqa: E402  (bench/report/runs.py: the run CSV and JSON reader)

MIB = 1024.0 * 1024.0
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
