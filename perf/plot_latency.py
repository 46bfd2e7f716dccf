#!/usr/bin/env python3
"""Latency percentiles of several ping loops as one SVG chart (python3 standard library only).

Each series is one row: a bar from 0 to the p50, a lighter bar on to the p90, a whisker on to
the p99, and a tick at the mean, on a logarithmic axis (the loops compared differ by orders of
magnitude). Inputs are the JSON files the measuring tools write:

  LABEL=FILE            bt-ping --json FILE: the pings (mean_us, p50_us, p90_us, p99_us)
  LABEL=FILE#baseline   the same file's bare Beast round trip (bt-ping --baseline: the
                        baseline's bare_rtt_mean_us, bare_rtt_p50_us, bare_rtt_p90_us,
                        bare_rtt_p99_us)
  LABEL=FILE#row=CONFIG/NAME
                        python/perf/ping_compare.py --json FILE: the row named NAME measured
                        against the axon configuration CONFIG ("default" or "python-compatible");
                        mean, p50 and p99 (that script reports no p90)

Example (docs/performance.md, "Latency: the plot"):

  perf/plot_latency.py --out docs/img/ping_latency.svg --title "..." \\
      "bare Beast round trip=sig.json#baseline" "signed ping=sig.json"

Exit status 0 on success, 2 for bad usage or an input without the figures named (the message
says which file and key).
"""
import argparse
import html
import json
import math
import sys


def fail(msg):
    print(f"plot_latency.py: {msg}", file=sys.stderr)
    sys.exit(2)


def figures_of(spec):
    """(label, {mean, p50, p90 or None, p99}) of one LABEL=FILE[#...] argument."""
    if "=" not in spec:
        fail(f"expected LABEL=FILE[#baseline|#row=CONFIG/NAME], got '{spec}'")
    label, rest = spec.split("=", 1)
    path, _, selector = rest.partition("#")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if selector == "":
        src, keys = doc, ("mean_us", "p50_us", "p90_us", "p99_us")
    elif selector == "baseline":
        src = doc.get("baseline")
        if not isinstance(src, dict):
            fail(f"{path}: no 'baseline' object (run bt-ping with --baseline)")
        keys = ("bare_rtt_mean_us", "bare_rtt_p50_us", "bare_rtt_p90_us", "bare_rtt_p99_us")
    elif selector.startswith("row="):
        config, _, name = selector[4:].partition("/")
        by_config = doc.get("rows")
        if not isinstance(by_config, dict) or not isinstance(by_config.get(config), list):
            fail(f"{path}: no rows for the axon configuration '{config}'")
        rows = [r for r in by_config[config] if isinstance(r, dict) and r.get("name") == name]
        if not rows:
            fail(f"{path}: no row named '{name}' under '{config}'")
        src, keys = rows[0], ("mean_us", "p50_us", None, "p99_us")
    else:
        fail(f"{spec}: unknown selector '#{selector}'")
    out = {}
    for name, key in zip(("mean", "p50", "p90", "p99"), keys):
        value = src.get(key) if key else None
        if key and not isinstance(value, (int, float)):
            fail(f"{path}: '{key}' is missing or not a number")
        out[name] = value
    return label, out


def render(series, title, note):
    width, left, right, top, row_h = 900, 230, 30, 56, 46
    height = top + row_h * len(series) + 70 + 16 * len(note)
    values = [v for _, f in series for v in f.values() if v]
    lo = 10 ** math.floor(math.log10(min(values)))
    # Room on the right for the largest row's label: the axis runs to the first 1-2-5 value at
    # least three times the largest figure (a third of a decade and more on the log scale).
    hi = next(d * m for d in (10 ** k for k in range(0, 12)) for m in (1, 2, 5)
              if d * m >= 3 * max(values))
    plot_w = width - left - right

    def x(v):
        return left + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    e = html.escape
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         'font-family="sans-serif" font-size="12">',
         '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{width / 2}" y="24" font-size="15" text-anchor="middle">{e(title)}</text>']
    axis_y = top + row_h * len(series)
    decade = lo
    while decade <= hi * 1.0001:
        for m in (1, 2, 5):
            v = decade * m
            if v < lo or v > hi * 1.0001:
                continue
            s.append(f'<line x1="{x(v):.1f}" y1="{top - 6}" x2="{x(v):.1f}" y2="{axis_y}" '
                     f'stroke="#ddd"/>')
            text = f"{v / 1000:g} ms" if v >= 1000 else f"{v:g} µs"
            s.append(f'<text x="{x(v):.1f}" y="{axis_y + 16}" text-anchor="middle">{text}</text>')
        decade *= 10
    s.append(f'<line x1="{left}" y1="{axis_y}" x2="{width - right}" y2="{axis_y}" stroke="black"/>')
    for i, (label, f) in enumerate(series):
        y = top + i * row_h + 8
        h = row_h - 20
        s.append(f'<text x="{left - 8}" y="{y + h / 2 + 4:.1f}" text-anchor="end">{e(label)}</text>')
        s.append(f'<rect x="{left}" y="{y}" width="{x(f["p50"]) - left:.1f}" height="{h}" '
                 'fill="#4f81bd"/>')
        upper = f["p90"] or f["p50"]
        if f["p90"]:
            s.append(f'<rect x="{x(f["p50"]):.1f}" y="{y}" width="{x(upper) - x(f["p50"]):.1f}" '
                     f'height="{h}" fill="#a9c1e0"/>')
        s.append(f'<line x1="{x(upper):.1f}" y1="{y + h / 2}" x2="{x(f["p99"]):.1f}" '
                 f'y2="{y + h / 2}" stroke="black"/>')
        s.append(f'<line x1="{x(f["p99"]):.1f}" y1="{y + 4}" x2="{x(f["p99"]):.1f}" '
                 f'y2="{y + h - 4}" stroke="black"/>')
        s.append(f'<line x1="{x(f["mean"]):.1f}" y1="{y - 3}" x2="{x(f["mean"]):.1f}" '
                 f'y2="{y + h + 3}" stroke="#c0504d" stroke-width="2"/>')
        p90 = f"p90 {f['p90']:.0f}, " if f["p90"] else ""
        s.append(f'<text x="{x(f["p99"]) + 6:.1f}" y="{y + h / 2 + 4:.1f}" font-size="11">'
                 f'p50 {f["p50"]:.0f}, {p90}p99 {f["p99"]:.0f} µs</text>')
    y = axis_y + 38
    s.append(f'<rect x="{left}" y="{y - 10}" width="14" height="10" fill="#4f81bd"/>'
             f'<text x="{left + 18}" y="{y}">to p50</text>'
             f'<rect x="{left + 80}" y="{y - 10}" width="14" height="10" fill="#a9c1e0"/>'
             f'<text x="{left + 98}" y="{y}">p50 to p90</text>'
             f'<line x1="{left + 185}" y1="{y - 5}" x2="{left + 205}" y2="{y - 5}" stroke="black"/>'
             f'<text x="{left + 210}" y="{y}">to p99</text>'
             f'<line x1="{left + 270}" y1="{y - 12}" x2="{left + 270}" y2="{y + 2}" '
             'stroke="#c0504d" stroke-width="2"/>'
             f'<text x="{left + 276}" y="{y}">mean</text>')
    for j, line in enumerate(note):
        s.append(f'<text x="20" y="{y + 22 + 16 * j}" font-size="11" fill="#444">{e(line)}</text>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


def main():
    p = argparse.ArgumentParser(description="latency percentiles of ping loops as an SVG chart")
    p.add_argument("--out", required=True, help="the SVG file to write")
    p.add_argument("--title", default="Ping latency")
    p.add_argument("--note", action="append", default=[], help="a line under the chart (repeatable)")
    p.add_argument("series", nargs="+",
                   help="LABEL=FILE, LABEL=FILE#baseline or LABEL=FILE#row=CONFIG/NAME")
    args = p.parse_args()
    series = [figures_of(spec) for spec in args.series]
    with open(args.out, "w") as f:
        f.write(render(series, args.title, args.note))


if __name__ == "__main__":
    main()
