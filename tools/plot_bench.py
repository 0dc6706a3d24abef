#!/usr/bin/python3
"""plot_bench.py - plot the JSON `dpamr bench` writes: refine time against cdp launch grain, or, for a
deck with time steps, the regrid per step and the rebuild per level.

usage: plot_bench.py BENCH.json [-o OUT.png] [--title TEXT]

Refinement (a file whose rows have refine_ms): the x axis holds the cdp launch grains in order of
growing launch size (tile, group N for each group size ascending, level); the y axis the median
refine time in ms, log scale. One line for cdp pdl=on and one for cdp pdl=off, each point labelled
with its device-side launch count; dashed reference lines for hostlaunch pdl=on, hostlaunch pdl=off
and cpu, where the file has them. A file without cdp rows (a machine without a GPU) still gives a
plot of its reference lines.

Time steps (a file with "steps", rows with step and regrid_ms): two panels, log scale, a line per
variant: the median regrid time of every step (left), and the median rebuild time of every level
(right, from "level_ms"; a file without it says so in that panel).

OUT.png defaults to BENCH.json with .json replaced by .png; its folder is made when missing. It is
written to a temporary name in the same directory and renamed, so a failure leaves no partial file.
Exit status: 0 done, 2 bad input or usage (one message naming the file and what is wrong), 1 output not written.
"""
import argparse
import json
import math
import os
import statistics
import sys

PROG = "plot_bench.py"
GRAINS = ("tile", "group", "level")          # launch size grows in this order
PDL_STYLE = {"on": ("tab:blue", "o"), "off": ("tab:orange", "s")}


# dpamr_require.py: beside this script once installed, in validation/ in the source tree
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "validation"))
from dpamr_require import require  # noqa: E402


class BadInput(Exception):
    """The input file cannot be plotted; the message says why."""


def fail(status, msg):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    sys.exit(status)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_row(i, row):
    """Raise BadInput unless rows[i] has what the plot needs; return it unchanged."""
    if not isinstance(row, dict):
        raise BadInput(f"rows[{i}] is not a JSON object")
    variant = row.get("variant")
    where = f"rows[{i}]"
    if isinstance(variant, str):
        pdl = f" pdl={row['pdl']}" if variant != "cpu" and isinstance(row.get("pdl"), str) else ""
        where += f" ({variant}{pdl})"
    need = ["variant", "refine_ms"]
    if variant == "host":  # files written before the engine was renamed hostlaunch
        variant = row["variant"] = "hostlaunch"
    if variant in ("hostlaunch", "cdp"):
        need.append("pdl")
    if variant == "cdp":
        need += ["grain"] + (["group"] if row.get("grain") == "group" else [])
    missing = [k for k in need if k not in row]
    if missing:
        raise BadInput(f"{where}: missing key{'s' if len(missing) > 1 else ''} "
                       + ", ".join(repr(k) for k in missing))
    if variant not in ("cpu", "hostlaunch", "cdp"):
        raise BadInput(f"{where}: unknown variant {variant!r} (expected cpu, hostlaunch (host in older files) or cdp)")
    if not is_number(row["refine_ms"]) or row["refine_ms"] <= 0:
        raise BadInput(f"{where}: refine_ms is {row['refine_ms']!r}, not a positive number")
    if variant != "cpu" and row["pdl"] not in ("on", "off"):
        raise BadInput(f"{where}: pdl is {row['pdl']!r}, not \"on\" or \"off\"")
    if variant == "cdp":
        if row["grain"] not in GRAINS:
            raise BadInput(f"{where}: grain is {row['grain']!r}, not one of " + ", ".join(GRAINS))
        g = row.get("group")
        if row["grain"] == "group" and not (isinstance(g, int) and not isinstance(g, bool) and g > 0):
            raise BadInput(f"{where}: group is {g!r}, not a positive integer")
    return row


def check_step_row(i, row):
    """Raise BadInput unless rows[i] of a time-step bench has what the plot needs; return it."""
    if not isinstance(row, dict):
        raise BadInput(f"rows[{i}] is not a JSON object")
    missing = [k for k in ("variant", "pdl", "step", "regrid_ms") if k not in row]
    if missing:
        raise BadInput(f"rows[{i}]: missing key{'s' if len(missing) > 1 else ''} " + ", ".join(repr(k) for k in missing))
    if row["variant"] not in ("cpu", "hostlaunch", "cdp"):
        raise BadInput(f"rows[{i}]: unknown variant {row['variant']!r} (expected cpu, hostlaunch or cdp)")
    if row["variant"] == "cpu":
        row["pdl"] = "-"
    elif row["pdl"] not in ("on", "off"):
        raise BadInput(f"rows[{i}]: pdl is {row['pdl']!r}, not \"on\" or \"off\"")
    if not (isinstance(row["step"], int) and not isinstance(row["step"], bool) and row["step"] > 0):
        raise BadInput(f"rows[{i}]: step is {row['step']!r}, not a positive integer")
    if not is_number(row["regrid_ms"]) or row["regrid_ms"] <= 0:
        raise BadInput(f"rows[{i}]: regrid_ms is {row['regrid_ms']!r}, not a positive number")
    return row


def check_levels(doc):
    """The checked "level_ms" list of a time-step bench ([] when the file has none)."""
    lv = doc.get("level_ms", [])
    if not isinstance(lv, list):
        raise BadInput('"level_ms" is not a list')
    for i, v in enumerate(lv):
        if not (isinstance(v, dict) and v.get("variant") in ("cpu", "hostlaunch", "cdp")
                and isinstance(v.get("median_ms"), list)):
            raise BadInput(f"level_ms[{i}] is not an object with a variant and a median_ms list")
        if not all(x is None or (is_number(x) and x >= 0) for x in v["median_ms"]):
            raise BadInput(f"level_ms[{i}] ({v['variant']}): median_ms holds something other than null or a time")
    return lv


def load(path):
    """Read and check BENCH.json; return (top-level object, its checked rows)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BadInput(f"cannot read: {e.strerror}")
    except UnicodeDecodeError:
        raise BadInput("not UTF-8 text, so not a dpamr bench JSON file")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}")
    if not isinstance(doc, dict):
        raise BadInput("not a JSON object, so not a dpamr bench JSON file")
    if "rows" not in doc:
        raise BadInput('no "rows" key, so not a dpamr bench JSON file')
    if not isinstance(doc["rows"], list):
        raise BadInput('"rows" is not a list')
    if not doc["rows"]:
        raise BadInput('"rows" is empty: nothing to plot')
    if "steps" in doc:
        rows = [check_step_row(i, r) for i, r in enumerate(doc["rows"])]
        seen = set()
        for i, r in enumerate(rows):
            key = (r["variant"], r["pdl"], r["step"])
            if key in seen:
                raise BadInput(f"rows[{i}] repeats an earlier row's variant, pdl and step")
            seen.add(key)
        check_levels(doc)
        return doc, rows
    rows = [check_row(i, r) for i, r in enumerate(doc["rows"])]
    seen = set()
    for i, r in enumerate(rows):
        key = (r["variant"], r.get("pdl") if r["variant"] != "cpu" else None,
               r.get("grain") if r["variant"] == "cdp" else None,
               r.get("group") if r.get("grain") == "group" else None)
        if key in seen:
            raise BadInput(f"rows[{i}] repeats an earlier row's variant, pdl, grain and group")
        seen.add(key)
    return doc, rows


def ms(v):
    return f"{v:.0f} ms" if v >= 100 else f"{v:.3g} ms"


def launches_text(n):
    if n >= 1e6:
        return f"{n / 1e6:.3g}M launches"
    if n >= 1e4:
        return f"{n / 1e3:.0f}k launches"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k launches"
    return f"{n} launch" + ("" if n == 1 else "es")


def grain_key(row):
    """Sort key and tick label of a cdp row's grain."""
    g = row["grain"]
    if g == "group":
        return (1, row["group"]), f"group {row['group']}"
    return (GRAINS.index(g), 0), g


def title_of(doc):
    deck = doc.get("deck") if isinstance(doc.get("deck"), str) else "dpamr bench"
    device = doc.get("device")
    t = deck + (f" on {device}" if isinstance(device, str) and device not in ("", "none") else "")
    commit = doc.get("commit")
    return t + (f" ({commit})" if isinstance(commit, str) and commit else "")


def label_of(variant, pdl):
    return variant if variant == "cpu" else f"{variant} pdl={pdl}"


VARIANT_STYLE = {("cpu", "-"): ("0.35", "D", "-"), ("hostlaunch", "off"): ("tab:orange", "s", "--"),
                 ("hostlaunch", "on"): ("tab:blue", "o", "--"), ("cdp", "off"): ("tab:orange", "s", "-"),
                 ("cdp", "on"): ("tab:blue", "o", "-")}


def plot_steps(doc, rows, out, title):
    """Time steps: regrid per step (left) and rebuild per level (right), a line per variant."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 5.2), dpi=110)
    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    order = [k for k in VARIANT_STYLE if any((r["variant"], r["pdl"]) == k for r in rows)]
    for key in order:
        color, marker, ls = VARIANT_STYLE[key]
        pts = sorted((r["step"], r["regrid_ms"]) for r in rows if (r["variant"], r["pdl"]) == key)
        med = statistics.median(y for _, y in pts)
        a1.plot([x for x, _ in pts], [y for _, y in pts], color=color, marker=marker, linestyle=ls, markersize=4,
                label=f"{label_of(*key)}: {ms(med)}")
    ys = [r["regrid_ms"] for r in rows]
    logy = max(ys) > 10 * min(ys)  # cpu and GPU variants together
    if logy:
        a1.set_yscale("log")
        a1.yaxis.set_major_formatter(fmt)
        a1.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    a1.xaxis.set_major_locator(MaxNLocator(integer=True))
    a1.set_xlabel("step")
    reps = doc.get("repeats")
    a1.set_ylabel("regrid time, ms" + (" (log scale)" if logy else "")
                  + (f"; median of {reps} run{'' if reps == 1 else 's'}" if is_number(reps) else ""))
    a1.grid(True, which="both", axis="y", alpha=0.25)
    a1.legend(fontsize=8, frameon=False)
    a1.set_title("regrid per step", fontsize=10)

    levels = check_levels(doc)
    for v in levels:
        key = (v["variant"], "-" if v["variant"] == "cpu" else v.get("pdl"))
        color, marker, ls = VARIANT_STYLE.get(key, ("0.5", ".", ":"))
        pts = [(L, x) for L, x in enumerate(v["median_ms"]) if x is not None and x > 0]
        if pts:
            a2.plot([L for L, _ in pts], [x for _, x in pts], color=color, marker=marker, linestyle=ls,
                    markersize=4, label=label_of(*key))
    if any(x for v in levels for x in v["median_ms"]):
        a2.set_yscale("log")
        a2.yaxis.set_major_formatter(fmt)
        a2.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        a2.legend(fontsize=8, frameon=False)
    else:
        a2.text(0.5, 0.5, "no per-level times in this file", transform=a2.transAxes, ha="center", va="center",
                fontsize=11, color="0.3")
    a2.xaxis.set_major_locator(MaxNLocator(integer=True))
    a2.set_xlabel("level built")
    a2.set_ylabel("rebuild time, ms (log scale)")
    a2.grid(True, which="both", axis="y", alpha=0.25)
    a2.set_title("rebuild per level, median over the regrids\n(GPU: from the end of the level before, launch included)",
                 fontsize=10)
    fig.suptitle(title if title is not None else title_of(doc), fontsize=11)
    fig.tight_layout()
    save(fig, plt, out)


def save(fig, plt, out):
    """Write the figure to a temporary name beside out and rename it (no partial file on failure); out's
    folder is made when missing."""
    folder = os.path.dirname(out) or "."
    tmp = os.path.join(folder, f".{os.path.basename(out)}.tmp.{os.getpid()}")
    try:
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise NotADirectoryError(20, f"its folder {folder} exists and is not a folder")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise OSError(e.errno, f"cannot make its folder {folder}: {e.strerror}") from e
        fig.savefig(tmp, format="png")
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    finally:
        plt.close(fig)


def plot(doc, rows, out, title):
    if "steps" in doc:
        return plot_steps(doc, rows, out, title)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=110)
    cdp = [r for r in rows if r["variant"] == "cdp"]
    keys = sorted({grain_key(r) for r in cdp})
    pos = {k: i for i, (k, _) in enumerate(keys)}

    for pdl in ("on", "off"):
        pts = sorted(((pos[grain_key(r)[0]], r) for r in cdp if r["pdl"] == pdl), key=lambda p: p[0])
        if pts:
            color, marker = PDL_STYLE[pdl]
            ax.plot([x for x, _ in pts], [r["refine_ms"] for _, r in pts], color=color, marker=marker,
                    linewidth=1.8, markersize=6, label=f"cdp pdl={pdl}")

    # device-side launch counts: one label per grain above its higher point, or, where pdl=on and
    # pdl=off launched differently, one per point in its line's colour: the higher one above, the lower below
    for x in range(len(keys)):
        at = sorted((r for r in cdp if pos[grain_key(r)[0]] == x and is_number(r.get("launches"))
                     and r["launches"] >= 0), key=lambda r: -r["refine_ms"])
        counts = {int(r["launches"]) for r in at}
        if len(counts) == 1:
            labels = [(at[0], launches_text(counts.pop()), "0.2")]
        else:
            labels = [(r, f"{launches_text(int(r['launches']))} (pdl={r['pdl']})", PDL_STYLE[r["pdl"]][0])
                      for r in at]
        for k, (r, text, color) in enumerate(labels):
            ax.annotate(text, (x, r["refine_ms"]), textcoords="offset points", xytext=(6, -6 if k else 6),
                        ha="left", va="top" if k else "bottom", fontsize=8, color=color)

    refs = [("hostlaunch", "on", "tab:blue"), ("hostlaunch", "off", "tab:orange"), ("cpu", None, "0.35")]
    for variant, pdl, color in refs:
        for r in rows:
            if r["variant"] == variant and (pdl is None or r["pdl"] == pdl):
                name = variant + (f" pdl={pdl}" if pdl else "")
                ax.axhline(r["refine_ms"], color=color, linestyle="--", linewidth=1.2,
                           label=f"{name}: {ms(r['refine_ms'])}")

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.margins(x=0.12, y=0.12)
    if keys:
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([label for _, label in keys])
    else:
        ax.set_xticks([])
        ax.text(0.5, 0.5, "no GPU rows in this file", transform=ax.transAxes, ha="center", va="center",
                fontsize=12, color="0.3", bbox=dict(boxstyle="round", facecolor="white", edgecolor="0.7"))
    ax.set_xlabel("cdp launch grain (launch size grows to the right)")
    reps = doc.get("repeats")
    ax.set_ylabel("refine time, ms (log scale)" + (f"; median of {reps} runs" if is_number(reps) else ""))
    ax.grid(True, which="major", axis="y", alpha=0.35)
    ax.grid(True, which="minor", axis="y", alpha=0.12)
    ax.set_title(title if title is not None else title_of(doc), fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    fig.tight_layout()
    save(fig, plt, out)


def main():
    ap = argparse.ArgumentParser(prog=PROG, description="Plot the JSON that `dpamr bench` writes: refine time "
                                 "against cdp launch grain, or the regrid per step and per level of a deck "
                                 "with time steps.")
    ap.add_argument("bench", metavar="BENCH.json")
    ap.add_argument("-o", dest="out", metavar="OUT.png", help="default: BENCH.json with .json replaced by .png")
    ap.add_argument("--title", help="default: deck, device and commit from the file")
    a = ap.parse_args()
    require(PROG, ["matplotlib"])

    out = a.out
    if out is None:
        out = (a.bench[:-5] if a.bench.endswith(".json") else a.bench) + ".png"
    if os.path.realpath(out) == os.path.realpath(a.bench):
        fail(2, f"{out}: is the input file; refusing to overwrite it (give another -o)")
    try:
        doc, rows = load(a.bench)
    except BadInput as e:
        fail(2, f"{a.bench}: {e}")
    try:
        plot(doc, rows, out, a.title)
    except ImportError as e:
        fail(1, f"cannot plot {a.bench}: {e} (install python3-matplotlib)")
    except OSError as e:
        fail(1, f"cannot write {out}: {e.strerror or e}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
