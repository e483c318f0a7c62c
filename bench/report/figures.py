"""The report's figures, from a run's rows: for each metric (time, GFLOP/s,
fraction of the ceiling) one panel per shape apart from T (dtype, op,
causal, B, C, NH, hs, wo, threads, weights), in each a solid line per attn
variant (api/path/engine) and a dashed line per peer, points against T.

The figures are plots.py's dicts (its docstring describes them); more than
PANELS_PER_FIGURE panels continue in NAME-2.png and so on.
"""
import math
from collections import namedtuple

import runs

PANELS_PER_FIGURE = 12

# name: the PNG's; suffix: of the CSV's columns attn_SUFFIX and PEER_SUFFIX
Kind = namedtuple("Kind", "name title y_label log_y y_min suffix")
KINDS = (
    Kind("time", "median time of one call", "ms", 10, None, "median_ms"),
    Kind("gflops", "GFLOP/s (FLOP count / median time)", "GFLOP/s", 0, 0.0, "gflops"),
    Kind("ceiling", "fraction of the GEMM ceiling", "GFLOP/s / ceiling", 0, 0.0,
         "ceiling_fraction"),
)

# Line styles (plots.py's colours): attn's variants take these in the order
# they first appear in the rows; each peer keeps its own everywhere.
ATTN_STYLES = (1, 5, 6, 7, 8)
PEER_STYLES = {"naive": 2, "numpy": 3, "numpy32": 9, "torch": 4, "python": 6, "ort": 10,
               "openvino": 11, "ggml": 12}


def variant(row):
    """attn's variant of a row: api/path/engine ("plan/auto/auto")."""
    engine = runs.field(row, "engine") or runs.ENGINE_BEFORE_THE_AXIS
    return f"{runs.field(row, 'api')}/{runs.field(row, 'path')}/{engine}"


def panel_title(row):
    """The shape of a row apart from T: the title, and key, of its panel."""
    dtype, op, causal, B, C, NH, hs, wo, threads, weights = (
        runs.field(row, column)
        for column in ("dtype", "op", "causal", "B", "C", "NH", "hs", "wo", "threads", "weights"))
    return (f"{dtype} {op} causal={causal}  B={B} C={C} NH={NH} hs={hs} wo={wo}  "
            f"threads={threads}{' weights' if weights == '1' else ''}")


def _add_point(panel, title, dashed, style, x, y):
    """Adds (x, y) to the panel's series called title (made when new) unless
    the series has that x already: the peers' numbers repeat on every attn
    variant of a shape."""
    series = panel.setdefault(title, {"title": title, "dashed": dashed, "style": style,
                                      "points": {}})
    series["points"].setdefault(x, y)


def panels(rows, suffix):
    """The panels of one metric (the columns' suffix), in the order their
    shapes first appear; attn's series first, then the peers'."""
    variants = []
    for row in rows:
        if variant(row) not in variants:
            variants.append(variant(row))
    by_title = {}
    for row in rows:
        x = runs.number(row, "T")
        if not math.isfinite(x):
            continue
        panel = by_title.setdefault(panel_title(row), {})
        style = ATTN_STYLES[variants.index(variant(row)) % len(ATTN_STYLES)]
        _add_point(panel, "attn " + variant(row), False, style, x,
                   runs.number(row, "attn_" + suffix))
        for peer in runs.PEERS:
            y = runs.number(row, f"{peer}_{suffix}")
            if not math.isnan(y):
                _add_point(panel, peer, True, PEER_STYLES[peer], x, y)
    result = []
    for title, series in by_title.items():
        ordered = sorted(series.values(), key=lambda s: s["dashed"])  # stable
        lines = []
        for s in ordered:
            xs = sorted(s["points"])
            lines.append({"title": s["title"], "dashed": s["dashed"], "style": s["style"],
                          "x": xs, "y": [s["points"][x] for x in xs]})
        result.append({"title": title, "series": lines})
    return result


def figures(rows, kind):
    """(file name, figure) of one kind: NAME.png, then NAME-2.png ... when
    there are more than PANELS_PER_FIGURE panels. The figures' "path" is the
    file name: the caller puts it in its folder."""
    every = panels(rows, kind.suffix)
    result = []
    for part, first in enumerate(range(0, len(every), PANELS_PER_FIGURE), start=1):
        name = f"{kind.name}-{part}.png" if part > 1 else f"{kind.name}.png"
        result.append((name, {
            "path": name, "title": kind.title, "x_label": "T", "y_label": kind.y_label,
            "log_x": 2, "log_y": kind.log_y, "y_min": kind.y_min, "y_max": None,
            "key": "below", "panels": every[first:first + PANELS_PER_FIGURE]}))
    return result
