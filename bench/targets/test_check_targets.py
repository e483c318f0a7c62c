#!/usr/bin/env python3
"""Self-test of check_targets.py on the canned runs of testdata/ (and, when
given attn-memory's path, a smoke run of attn-memory). Timing nothing: the
ratios asserted here are computed by hand from the canned numbers.

Usage: test_check_targets.py [--memory-program PATH] [--work DIR]
"""
import argparse
import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "testdata")
sys.path.insert(0, HERE)
import check_targets  # noqa: E402

MEMORY_PROGRAM = None
WORK = None


def data(name):
    return os.path.join(DATA, name)


def run(*args):
    """check_targets.main(args): (exit status, stdout)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            status = check_targets.main(list(args))
        except SystemExit as exit_:  # argparse errors
            status = exit_.code
    return status, out.getvalue()


class CannedRun(unittest.TestCase):
    """run.csv (every sweep of a real run, one row removed) + rerun.csv (the
    course's plan row again, from a noisy run) + memory.csv + baseline.json."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(dir=WORK)
        cls.results_path = os.path.join(cls.dir, "results.json")
        cls.markdown_path = os.path.join(cls.dir, "results.md")
        cls.status, cls.stdout = run(
            data("run.csv"), data("rerun.csv"), "--memory", data("memory.csv"),
            "--baseline", data("baseline.json"), "--results-json", cls.results_path,
            "--markdown", cls.markdown_path)
        with open(cls.results_path) as handle:
            cls.results = {r["id"]: r for r in json.load(handle)}

    def check(self, target_id, value, meets, status_has=(), status_lacks=()):
        result = self.results[target_id]
        self.assertAlmostEqual(result["measured"], value, places=4, msg=target_id)
        self.assertEqual(result["meets"], meets, target_id)
        for text in status_has:
            self.assertIn(text, result["status"], target_id)
        for text in status_lacks:
            self.assertNotIn(text, result["status"], target_id)

    def test_every_target_reported(self):
        self.assertEqual(self.status, 0)  # reporting only
        self.assertEqual(set(self.results), {t[0] for t in check_targets.TARGETS})
        self.assertEqual(len(self.results), 31)

    def test_later_csv_wins_and_noisy_run_flagged(self):
        # rerun.csv: NumPy 0.03 ms / attn 0.001 ms, from a run with 0.5 CPUs busy
        self.check("course_plan_vs_numpy", 30.0, True, ("meets", "noisy run"))

    def test_peer_ratios(self):
        self.check("course_oneshot_vs_numpy", 0.01333 / 0.001002, False, ("SHORT",))
        self.check("head4096_causal_vs_numpy", 260.565 / 30.0248, True)
        self.check("gpt2_forward_vs_torch", 154.116 / 39.6419, True)
        self.check("gpt2_fwdbwd_vs_torch", 412.093 / 184.014, True)

    def test_ceiling_fractions(self):
        self.check("head_f32_ceiling", 0.3797, False, ("SHORT",))
        self.check("head_f64_ceiling", 0.3747, False, ("SHORT",))

    def test_time_ratios(self):
        self.check("head4096_causal_time", 30.0248 / 47.8073, False, ("SHORT",),
                   ("regressed", "improved"))  # baseline 0.625: within 15%
        self.check("tiled_time_T1024", max(2.51995 / 2.39294, 1.50288 / 1.69488), True)
        self.check("tiled_time_T4096", max(38.2369 / 41.809, 20.3169 / 23.985), True)
        self.check("backward_head_c0", (22.7232 - 8.49641) / 8.49641, True)
        self.check("backward_gpt2", (184.014 - 39.6419) / 39.6419, False, ("SHORT",))
        self.check("threads_small1_fwdbwd", 10.4595 / 6.91113, False, ("SHORT",))

    def test_memory(self):
        self.check("long_memory_f32_T16384", 17110704 / 1048576.0, True,
                   ("meets", "regressed"))  # baseline 10 MiB

    def test_baseline_comparison(self):
        head = self.results["head_f32_vs_numpy"]  # 2.11x against a baseline of 3x
        self.assertAlmostEqual(head["measured"], 17.9331 / 8.49641, places=4)
        self.assertTrue(head["meets"])
        self.assertTrue(head["regressed"])
        self.assertIn("regressed 42%", head["status"])
        small = self.results["threads_small1_forward"]  # 1.68x against 1.2x
        self.assertTrue(small["improved"])
        self.assertFalse(small["regressed"])
        self.assertIn("no baseline", self.results["gpt2_forward_vs_torch"]["status"])

    def test_missing_row(self):
        missing = self.results["threads_small2_fwdbwd"]  # its 2-thread row was removed
        self.assertIsNone(missing["measured"])
        self.assertIsNone(missing["meets"])
        self.assertEqual(missing["status"], "not measured")
        self.assertTrue(missing["detail"].startswith("no row f32 backward"), missing["detail"])

    def test_printed_table(self):
        lines = self.stdout.splitlines()
        self.assertTrue(any(line.startswith("case ") and "measured" in line and "baseline"
                            in line for line in lines))
        self.assertIn("# 13 of 31 targets met", self.stdout)
        self.assertIn("short of target: course_oneshot_vs_numpy", self.stdout)
        self.assertIn("not measured: threads_small2_fwdbwd", self.stdout)

    def test_markdown(self):
        with open(self.markdown_path) as handle:
            text = handle.read()
        table = [line for line in text.splitlines() if line.startswith("|")]
        self.assertEqual(len(table), 2 + 31)
        self.assertTrue(table[0].startswith("| case | target | measured | baseline | status"))
        self.assertIn("| 16.3 MiB |", text)
        self.assertIn("| 38.0% |", text)

    def test_exit_statuses(self):
        args = [data("run.csv"), "--memory", data("memory.csv"), "--baseline",
                data("baseline.json")]
        self.assertEqual(run(*args, "--strict")[0], 1)          # targets short
        self.assertEqual(run(*args, "--strict-baseline")[0], 1)  # regressions
        self.assertEqual(run(data("run.csv"), "--baseline", "none",
                             "--strict-baseline")[0], 0)
        foreign = os.path.join(self.dir, "foreign.csv")
        with open(foreign, "w") as handle:
            handle.write("a,b\n1,2\n")
        self.assertEqual(run(foreign)[0], 2)                     # not an attn-bench CSV
        self.assertEqual(run(data("run.csv"), "--noise", "-1")[0], 2)
        self.assertEqual(run()[0], 2)                            # no input
        self.assertEqual(run(os.path.join(self.dir, "absent.csv"))[0], 2)

    def test_write_baseline_round_trip(self):
        path = os.path.join(self.dir, "new-baseline.json")
        args = [data("run.csv"), data("rerun.csv"), "--memory", data("memory.csv")]
        self.assertEqual(run(*args, "--baseline", "none", "--write-baseline", path)[0], 0)
        with open(path) as handle:
            stored = json.load(handle)
        self.assertEqual(stored["schema"], 1)
        self.assertEqual(len(stored["ratios"]), 20)  # all but the 11 missing ones
        self.assertAlmostEqual(stored["ratios"]["course_plan_vs_numpy"], 30.0)
        status, out = run(*args, "--baseline", path, "--strict-baseline")
        self.assertEqual(status, 0)
        self.assertNotIn("regressed", out.split("---", 1)[1])


class EngineTargets(unittest.TestCase):
    """engines.csv: fabricated rows of the sweeps that run several engines
    (gpt2, gpt2-b8, head4096: plans on engines auto, blas and own, one-shots;
    oneshot: plans and one-shots), PyTorch as the peer, the sgemm ceiling at
    400 GFLOP/s. Every ratio below is computed by hand from its numbers."""

    @classmethod
    def setUpClass(cls):
        path = os.path.join(tempfile.mkdtemp(dir=WORK), "results.json")
        cls.status, cls.stdout = run(data("engines.csv"), "--baseline", "none",
                                     "--results-json", path)
        with open(path) as handle:
            cls.results = {r["id"]: r for r in json.load(handle)}

    def check(self, target_id, value, meets):
        result = self.results[target_id]
        self.assertAlmostEqual(result["measured"], value, places=4, msg=target_id)
        self.assertEqual(result["meets"], meets, target_id)

    def test_rows_keyed_by_engine(self):
        # the auto row (20 ms), not the blas (24) or own (19.5) row of the same shape
        self.check("gpt2_forward_vs_torch", 26.0 / 20.0, True)
        self.assertIn("(auto = own x2)", self.results["gpt2_forward_vs_torch"]["detail"])
        self.check("gpt2_fwdbwd_vs_torch", 72.0 / 60.0, False)  # >= 1.25x
        self.check("backward_gpt2", (60.0 - 20.0) / 20.0, True)

    def test_torch_ratios(self):
        self.check("gpt2_b8_forward_vs_torch", 65.0 / 50.0, True)
        self.check("head4096_forward_vs_torch", 39.0 / 30.0, True)
        self.check("head4096_causal_forward_vs_torch", 28.0 / 16.0, True)
        self.check("head4096_fwdbwd_vs_torch", min(160.0 / 100.0, 85.0 / 60.0), False)

    def test_ceiling_share(self):
        self.check("gpt2_forward_ceiling", 0.8053, False)  # 322.1 of 400 GFLOP/s

    def test_auto_vs_best(self):
        self.check("auto_vs_best_gpt2", max(20.0 / 19.5, 60.0 / 58.0), True)
        self.check("auto_vs_best_gpt2_b8", 50.0 / 47.0, False)
        self.check("auto_vs_best_head4096",
                   max(30.0 / 30.5, 16.0 / 16.0, 100.0 / 98.0, 60.0 / 59.0), True)
        detail = self.results["auto_vs_best_gpt2"]["detail"]
        self.assertIn("fwd c=1: auto (own x2) 20 / own 19.5 ms", detail)

    def test_oneshot_vs_plan(self):
        self.check("oneshot_T256", max(2.1 / 2.0, 6.3 / 6.0), True)
        self.check("oneshot_T1024", max(21.0 / 20.0, 69.0 / 60.0), False)
        self.check("oneshot_T4096", max(31.5 / 30.0, 16.8 / 16.0), True)

    def test_summary(self):
        self.assertEqual(self.status, 0)
        self.assertIn("short of target: gpt2_fwdbwd_vs_torch, head4096_fwdbwd_vs_torch, "
                      "gpt2_forward_ceiling, auto_vs_best_gpt2_b8, oneshot_T1024", self.stdout)
        for target_id in ("gpt2_b8_forward_vs_torch", "auto_vs_best_head4096", "oneshot_T256"):
            self.assertEqual(self.results[target_id]["sweeps"], ["engines"], target_id)

    def test_csv_without_engine_column(self):
        # attn-bench CSVs from before --engine ran their plans on BLAS threads:
        # their rows are engine blas, so no target that asks for auto uses them
        path = os.path.join(tempfile.mkdtemp(dir=WORK), "old.csv")
        with open(data("engines.csv"), newline="") as handle:
            rows = list(csv.DictReader(handle))
        columns = [c for c in rows[0] if c not in ("engine", "engine_threads")]
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(r for r in rows if r["engine"] == "auto")
        self.assertEqual({r["engine"] for r in check_targets.Run(path).rows}, {"blas"})
        status, out = run(path, "--baseline", "none")
        self.assertEqual(status, 0)
        self.assertIn("# 0 of 31 targets met", out)


class Rounds(unittest.TestCase):
    """testdata/rounds/r1..r5: one round each (head.sweep's rows; NumPy 17.9331
    ms everywhere), the f32 non-causal forward altered: attn 4.0, 4.2, 8.0, 3.9
    and 4.1 ms, ceiling fraction 0.70, 0.67, 0.35, 0.72, 0.68. r3's row ran at
    half speed and nothing else shows it; r4 ran with 0.8 CPUs busy; r5's
    2-thread sgemm probe after it ran at 98.5 GFLOP/s (the best run's: 200)."""

    def results(self, rounds, *options):
        path = os.path.join(tempfile.mkdtemp(dir=WORK), "results.json")
        status, out = run(*[data(os.path.join("rounds", r)) for r in rounds],
                          "--baseline", "none", "--results-json", path, *options)
        self.assertEqual(status, 0)
        with open(path) as handle:
            return {r["id"]: r for r in json.load(handle)}, out

    def test_noisy_rounds_left_out(self):
        results, out = self.results(("r1", "r2", "r3", "r4", "r5"))
        self.assertIn("# 5 rounds", out)
        head = results["head_f32_vs_numpy"]
        self.assertEqual(len(head["rounds"]), 5)
        self.assertEqual(head["sweeps"], ["head"])
        self.assertIn("median of 2 rounds", head["detail"])
        self.assertIn("3 noisy left out", head["detail"])
        self.assertNotIn("noisy run", head["status"])
        # r1 and r2 are left: 4.48 and 4.27, an even count: the worse
        self.assertAlmostEqual(head["measured"], 17.9331 / 4.2, places=4)
        self.assertAlmostEqual(results["head_f32_ceiling"]["measured"], 0.67)
        self.assertAlmostEqual(results["backward_head_c0"]["measured"],
                               (22.7232 - 4.0) / 4.0, places=4)  # the higher of two
        self.assertIn("sgemm after it 98.5 GFLOP/s", out)
        # r3 stays for the f64 row: only its f32 row was slow
        self.assertAlmostEqual(results["head_f64_ceiling"]["measured"], 0.3747)
        self.assertIn("median of 3 rounds", results["head_f64_ceiling"]["detail"])

    def test_median_of_every_round(self):
        results, _ = self.results(("r1", "r2", "r3", "r4", "r5"), "--load-max", "1",
                                  "--slow", "0")
        head = results["head_f32_vs_numpy"]  # 2.24, 4.27, 4.37, 4.48, 4.60
        self.assertAlmostEqual(head["measured"], 17.9331 / 4.1, places=4)
        self.assertIn("median of 5 rounds", head["detail"])
        self.assertAlmostEqual(results["head_f32_ceiling"]["measured"], 0.68)

    def test_each_kind_of_noise(self):
        results, _ = self.results(("r1", "r3"))
        self.assertEqual(results["head_f32_vs_numpy"]["measured"], 17.9331 / 4.0)
        self.assertIn("1 noisy left out", results["head_f32_vs_numpy"]["detail"])
        alone, _ = self.results(("r3",))  # one round cannot tell
        self.assertNotIn("noisy", alone["head_f32_vs_numpy"]["status"])
        alone, _ = self.results(("r4",))
        self.assertEqual(alone["head_f32_vs_numpy"]["noisy"], ["r4/head.csv (0.80 CPUs busy)"])
        self.assertIn("noisy run", alone["head_f32_vs_numpy"]["status"])
        alone, _ = self.results(("r5",))
        self.assertIn("r5/head.csv (sgemm at 52% of the best run's)",
                      alone["head_f32_vs_numpy"]["noisy"])
        both, _ = self.results(("r1", "r3"), "--slow", "0.4")  # r3 at 50%: tolerated
        self.assertAlmostEqual(both["head_f32_vs_numpy"]["measured"], 17.9331 / 8.0,
                               places=4)  # the lower of two
        self.assertEqual(results["gpt2_forward_vs_torch"]["status"], "not measured")


class MemoryProgram(unittest.TestCase):
    """attn-memory on a short sequence: one CSV row per configuration that
    check_targets.py reads; the forward allocates nothing."""

    def test_smoke(self):
        program = os.environ.get("ATTN_MEMORY_PROGRAM")
        if not program:
            self.skipTest("no attn-memory given (--memory-program)")
        done = subprocess.run([program, "--T", "600,1024", "--dtype", "f32", "--threads", "1",
                               "--path", "auto,materialized"], capture_output=True, text=True,
                              timeout=60, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        path = os.path.join(tempfile.mkdtemp(dir=WORK), "memory.csv")
        with open(path, "w") as handle:
            handle.write(done.stdout)
        rows = check_targets.read_memory(path)
        self.assertEqual([(r["T"], r["path"], r["ran_path"]) for r in rows],
                         [("600", "auto", "tiled"), ("600", "materialized", "materialized"),
                          ("1024", "auto", "tiled"), ("1024", "materialized", "materialized")])
        for row in rows:
            self.assertEqual(row["status"], "ok")
            self.assertGreater(int(row["extra_bytes"]), 0)
            if row["forward_heap_bytes"]:
                self.assertEqual(int(row["forward_heap_bytes"]), 0)
        self.assertEqual(subprocess.run([program, "--T", "x"], capture_output=True,
                                        check=False).returncode, 2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memory-program", help="attn-memory, for its smoke test")
    parser.add_argument("--work", help="directory for temporary files")
    args, rest = parser.parse_known_args()
    if args.memory_program:
        os.environ["ATTN_MEMORY_PROGRAM"] = args.memory_program
    if args.work:
        os.makedirs(args.work, exist_ok=True)
        WORK = args.work
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
