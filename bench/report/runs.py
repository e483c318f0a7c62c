"""Reading attn-bench's own files back: a run's CSV rows and its JSON.

Shared by the report (report.py) and the targets' checker
(bench/targets/check_targets.py). Standard library only.

A run's CSV is attn-bench's (bench/output/csv_out.c): a header row, then one
row per configuration. A last line without its newline is an interrupted
write and is left out, as attn-bench's own reader does (--resume). A CSV of
an older attn-bench lacks some columns (the numpy32 peer's, engine, ...):
it is read all the same, its missing fields read as "" (engine as "blas":
before the --engine axis plans ran on BLAS threads).
"""
import csv
import io
import json
import math
import os

# The columns that name a configuration (the first 14 of the header).
KEY = ("dtype", "op", "causal", "api", "path", "engine", "threads", "B", "T", "C", "NH", "hs",
       "wo", "weights")
# What a CSV must have to be a run's: the key (engine came later), the
# status and attn's time.
REQUIRED = tuple(c for c in KEY if c != "engine") + ("status", "attn_median_ms")
# The peers' column prefixes, in the CSV's order (measure/peer_timing.h).
PEERS = ("naive", "numpy", "numpy32", "torch", "python", "ort", "openvino", "ggml")
# A CSV older than attn-bench's --engine axis ran its plans on BLAS threads.
ENGINE_BEFORE_THE_AXIS = "blas"


class NotARunCSV(ValueError):
    """The file is not the CSV of an attn-bench run."""

    def __init__(self, path, why):
        super().__init__(f"{path} is not a CSV of this attn-bench run ({why})")


def complete_lines(text):
    """text up to the end of its last complete line."""
    if text.endswith("\n"):
        return text
    return text[:text.rfind("\n") + 1]


def read_rows(path):
    """The rows of the run CSV at path, as dicts by column name (a missing
    column reads as "", engine as ENGINE_BEFORE_THE_AXIS). Rows with fewer
    fields than the header (an unfinished line) are left out. Raises OSError
    (cannot read) or NotARunCSV."""
    with open(path, newline="") as handle:
        try:
            text = complete_lines(handle.read())
        except UnicodeDecodeError as error:
            raise NotARunCSV(path, error) from error
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        columns = reader.fieldnames or []
        missing = [c for c in REQUIRED if c not in columns]
        if missing:
            raise NotARunCSV(path, f"no column {', '.join(missing)}")
        rows = [row for row in reader if None not in row.values()]
    except csv.Error as error:
        raise NotARunCSV(path, error) from error
    for row in rows:
        row.pop(None, None)  # fields beyond the header's
        row.setdefault("engine", ENGINE_BEFORE_THE_AXIS)
    return rows


def field(row, column):
    """The row's text in column ("" when the CSV has no such column)."""
    return row.get(column) or ""


def number(row, column):
    """The row's number in column; NaN when empty, missing or not a number."""
    try:
        return float(row.get(column) or "nan")
    except ValueError:
        return math.nan


def json_path_beside(csv_path, suffix=".json"):
    """The name of a file written beside a run's CSV: NAME.csv -> NAME.json."""
    return os.path.splitext(csv_path)[0] + suffix


def read_json(path):
    """The JSON document at path. Raises OSError or ValueError."""
    with open(path) as handle:
        return json.load(handle)


def read_json_if_there(path):
    """The JSON document at path, or None when it is missing or unreadable."""
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def json_member(document, key):
    """document[key] when document is an object that has it, else None."""
    return document.get(key) if isinstance(document, dict) else None


def json_text(document, key, fallback):
    """The string member key of a JSON object, or fallback."""
    value = json_member(document, key)
    return value if isinstance(value, str) else fallback


def json_number(document, key, fallback):
    """The number member key of a JSON object (not a boolean), or fallback."""
    value = json_member(document, key)
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if is_number else fallback
