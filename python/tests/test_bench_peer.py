"""attn-bench's python peer (bench/peers/attn_python_peer.py) with this
package: its header lines, and a result line per shape whose time is
positive and whose output dtype is the shape's (the protocol of
bench/peers/peer_common.py)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER = os.path.join(ROOT, "bench", "peers", "attn_python_peer.py")


@pytest.mark.skipif(not os.path.exists(PEER), reason="not in a source tree")
def test_python_peer_answers_shapes():
    shapes = ["f32:forward:1:1:6:64:1:16:0", "f64:backward:1:2:9:12:3:4:1"]
    run = subprocess.run([sys.executable, PEER, "--threads", "1", "--repeats", "3",
                          "--min-time", "0", "--warmup", "1", *shapes],
                         capture_output=True, text=True, timeout=120, check=True)
    lines = run.stdout.splitlines()
    assert lines[0].startswith("info attn="), lines
    assert any(line.startswith("impl attn.Plan") for line in lines), lines
    results = [line.split() for line in lines if line.startswith("result ")]
    assert len(results) == 2, lines
    for fields, shape, dtype in zip(results, shapes, ("float32", "float64")):
        assert fields[1:10] == shape.split(":")
        median, fastest, repeats = float(fields[10]), float(fields[11]), int(fields[12])
        assert 0 < fastest <= median and repeats >= 3
        assert fields[13] == dtype
