#!/usr/bin/env python3
"""attn-bench's plotting: a figure, a grid of panels of line series, drawn
as a PNG with matplotlib (the Agg backend; no display needed).

The one plotting code of attn-bench: the report (report.py) calls draw();
the experiments (bench/output/plot.c) write the figure as JSON to
`plots.py --figure -`. A figure is a dict (JSON object):

  path      the PNG to write
  title     over the whole figure
  x_label, y_label
  log_x, log_y   0: linear; else the logarithm's base (2, 10)
  y_min, y_max   the y range's ends; null: automatic
  key       where the legends go: "below" (under each panel), or words of
            "top", "bottom", "left", "right", "center"; null: top left
  panels    a list of {"title", "series"}; series: a list of
            {"title", "x", "y", "dashed", "style"}: x and y the points (null
            y values, and values a log axis cannot show, are left out),
            dashed for the peers, style 1..12 the colour and marker (0 or
            missing: by position)

One panel fills the figure; more take two columns.

Usage: plots.py --figure FILE|-   draw the figure read from FILE (- : stdin)
       plots.py --check           exit 0 when matplotlib can be imported
Exit status: 0 drawn (or matplotlib found), 1 not (the reason on stderr),
2 bad arguments.
"""
import argparse
import json
import math
import sys

PANEL_INCHES = (5.6, 4.0)
DPI = 100
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#843c39")
MARKERS = ("+", "x", "*", "s", "D", "o", "^")


def available():
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _shown(value, log):
    """Whether a coordinate can be drawn on its axis."""
    return value is not None and math.isfinite(value) and (not log or value > 0)


def _legend_options(key):
    """matplotlib's legend placement for a figure's key."""
    if key == "below":
        return {"loc": "upper center", "bbox_to_anchor": (0.5, -0.14), "ncol": 3}
    words = (key or "top left").split()
    vertical = "upper" if "top" in words else "lower" if "bottom" in words else "center"
    horizontal = "left" if "left" in words else "right" if "right" in words else "center"
    return {"loc": "center" if vertical == horizontal == "center"
            else f"{vertical} {horizontal}"}


def _draw_panel(axes, panel, figure, ticker):
    """One panel's series, axes and legend."""
    log_x, log_y = figure.get("log_x") or 0, figure.get("log_y") or 0
    drawn = 0
    for position, series in enumerate(panel.get("series", [])):
        points = [(x, y) for x, y in zip(series.get("x", []), series.get("y", []))
                  if _shown(x, log_x) and _shown(y, log_y)]
        if not points:
            continue
        style = series.get("style") or position % len(COLOURS) + 1
        axes.plot([p[0] for p in points], [p[1] for p in points],
                  color=COLOURS[(style - 1) % len(COLOURS)],
                  marker=MARKERS[(style - 1) % len(MARKERS)], markersize=4, linewidth=1.5,
                  linestyle="--" if series.get("dashed") else "-", label=series.get("title"))
        drawn += 1
    axes.set_title(panel.get("title", ""), fontsize=9)
    axes.set_xlabel(figure.get("x_label", ""), fontsize=9)
    axes.set_ylabel(figure.get("y_label", ""), fontsize=9)
    axes.tick_params(labelsize=8)
    axes.grid(True, alpha=0.4)
    if log_x:
        axes.set_xscale("log", base=log_x)
        axes.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axes.xaxis.set_minor_formatter(ticker.NullFormatter())
    if log_y:
        axes.set_yscale("log", base=log_y)
        axes.yaxis.set_minor_formatter(ticker.NullFormatter())
    low, high = figure.get("y_min"), figure.get("y_max")
    if _shown(low, log_y) or _shown(high, log_y):
        axes.set_ylim(bottom=low if _shown(low, log_y) else None,
                      top=high if _shown(high, log_y) else None)
    if drawn:
        axes.legend(fontsize=7, handlelength=2.5, **_legend_options(figure.get("key")))


def draw(figure):
    """Writes the figure's PNG. Raises ImportError (no matplotlib), OSError
    (cannot write) or ValueError (not a figure)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import ticker
    from matplotlib.figure import Figure

    panels = figure.get("panels") or []
    if not isinstance(panels, list) or not figure.get("path"):
        raise ValueError("a figure needs a path and a list of panels")
    columns = 2 if len(panels) > 1 else 1
    rows = max(1, (len(panels) + columns - 1) // columns)
    canvas = Figure(figsize=(columns * PANEL_INCHES[0], rows * PANEL_INCHES[1] + 0.3),
                    dpi=DPI, layout="constrained")
    canvas.suptitle(figure.get("title", ""), fontsize=11)
    grid = canvas.subplots(rows, columns, squeeze=False)
    for index, axes in enumerate(grid.flat):
        if index < len(panels):
            _draw_panel(axes, panels[index], figure, ticker)
        else:
            axes.set_visible(False)
    canvas.savefig(figure["path"], format="png")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plots.py",
                                     description="Draws an attn-bench figure (JSON) as a PNG.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--figure", metavar="FILE", help="the figure's JSON ('-': stdin)")
    group.add_argument("--check", action="store_true",
                       help="exit 0 when matplotlib can be imported, else 1")
    args = parser.parse_args(argv)
    if args.check:
        return 0 if available() else 1
    try:
        if args.figure == "-":
            figure = json.load(sys.stdin)
        else:
            with open(args.figure) as handle:
                figure = json.load(handle)
        if not isinstance(figure, dict):
            raise ValueError("the figure is not a JSON object")
        draw(figure)
    except ImportError:
        print("plots.py: matplotlib was not found (Debian: python3-matplotlib)",
              file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"plots.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
