"""The example and the benchmark run, and what they show holds."""

import importlib.util
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "course_experiments.py")
OVERHEAD = os.path.join(HERE, "..", "benchmarks", "overhead.py")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_course_experiments_script(tmp_path):
    out = tmp_path / "experiments.png"
    run = subprocess.run([sys.executable, EXAMPLE, "--out", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    for title in ("1. sqrt(hs) saturation", "2. rank of Q K^T", "3. orthogonal vs Gaussian"):
        assert title in run.stdout
    if importlib.util.find_spec("matplotlib") is not None:
        assert out.exists() and out.stat().st_size > 1000
    else:
        assert "skipping the plot" in run.stdout and not out.exists()


def test_course_experiments_findings():
    ce = load(EXAMPLE, "course_experiments")
    sat = {(hs, scaled): (mx, ent) for hs, scaled, mx, ent, _ in ce.saturation()}
    assert sat[1024, False][0] > 0.9 and sat[1024, True][0] < 0.3  # unscaled saturates
    assert sat[1024, False][1] < sat[4, False][1]                    # entropy collapses
    for hs, rank, sv in ce.score_ranks():
        assert rank == hs and np.all(sv[hs:] < 1e-12)
    inits = {(init, hs): cond for init, hs, _, _, cond in ce.initialisations(seeds=2)}
    for hs in (16, 32, 64):
        assert inits["orthogonal", hs] < inits["gaussian", hs]


def test_overhead_benchmark_runs():
    run = subprocess.run([sys.executable, OVERHEAD, "--calls", "20", "--repeats", "3"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "largest binding overhead" in run.stdout
