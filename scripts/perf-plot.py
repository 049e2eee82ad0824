#!/usr/bin/env python3
"""The README's performance table and docs/perf.svg, from the figures of docs/perf.tsv.

    python3 scripts/perf-plot.py           rewrite the table in README.md and docs/perf.svg
    python3 scripts/perf-plot.py --check   exit 1 unless both are what the figures give and
                                           every figure appears in the BENCHMARKS.md section
                                           its row names (tests/readme.rs runs this)

Each row of docs/perf.tsv is one comparison: swarrow's figure and a peer's, each with its
unit. The speed ratio is swarrow's speed over the peer's: peer seconds / swarrow seconds for
wall times, swarrow rate / peer rate for rates (TCUPS and GCUPS converted). The plot is
written by hand (no plotting library): one bar per row on a logarithmic axis, 1 = the peer.
"""
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "perf.tsv"
SVG = ROOT / "docs" / "perf.svg"
README = ROOT / "README.md"
BENCHMARKS = ROOT / "BENCHMARKS.md"
BEGIN = "<!-- perf-table: scripts/perf-plot.py writes this table from docs/perf.tsv -->"
END = "<!-- /perf-table -->"
# Rates in one unit (cells per second for cell rates).
SCALE = {"TCUPS": 1e12, "GCUPS": 1e9, "pairs/s": 1.0}


def rows():
    lines = [l for l in FIGURES.read_text().splitlines() if l and not l.startswith("#")]
    header = lines[0].split("\t")
    return [dict(zip(header, l.split("\t"), strict=True)) for l in lines[1:]]


def number(text):
    return float(text.replace(",", ""))


def ratio(row):
    ours, peer = number(row["swarrow"]), number(row["peer_value"])
    if row["unit"] == "s" and row["peer_unit"] == "s":
        return peer / ours
    return ours * SCALE[row["unit"]] / (peer * SCALE[row["peer_unit"]])


def shown(value):
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def table():
    out = [
        BEGIN,
        "| comparison | device | swarrow | peer | swarrow's speed | commit, date |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows():
        out.append(
            f"| {r['job']} | {r['device']} | {r['swarrow']} {r['unit']} | {r['peer']}: {r['peer_value']} "
            f"{r['peer_unit']} | **{shown(ratio(r))}x** | {r['commit']}, {r['date']} |"
        )
    out.append(END)
    return "\n".join(out)


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def peer_line(row):
    return f"vs {row['peer']}; {row['device']}"


def svg():
    data = rows()
    # The labels' column is as wide as its longest line (about 6.8 and 5.8 pixels a character
    # at 12 and 10 pixels).
    left = round(16 + max(max(6.8 * len(r["job"]), 5.8 * len(peer_line(r))) for r in data))
    width, right, bar, gap, top = left + 440, 70, 22, 14, 48
    height = top + len(data) * (bar + gap) + 40
    ticks = [t for t in (0.5, 1, 2, 5, 10, 20, 50, 100, 200) if t <= max(ratio(r) for r in data) * 1.5]
    low, high = math.log10(0.5), math.log10(ticks[-1] * 1.5)
    x = lambda v: left + (math.log10(v) - low) / (high - low) * (width - left - right)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
        "swarrow's speed relative to each peer (1 = as fast as the peer; log scale)</text>",
    ]
    axis = top + len(data) * (bar + gap)
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{axis}" stroke="#ddd"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{axis + 16}" text-anchor="middle">{t:g}x</text>')
    for k, r in enumerate(data):
        y = top + k * (bar + gap)
        value = ratio(r)
        x0, x1 = x(1), x(value)
        fill = "#2a7ab0" if value >= 1 else "#c0504d"
        parts.append(
            f'<rect x="{min(x0, x1):.1f}" y="{y}" width="{abs(x1 - x0):.1f}" height="{bar}" fill="{fill}"/>'
        )
        parts.append(f'<text x="{left - 8:.0f}" y="{y + 11}" text-anchor="end">{escape(r["job"])}</text>')
        parts.append(
            f'<text x="{left - 8:.0f}" y="{y + 23}" text-anchor="end" fill="#555" font-size="10">'
            f"{escape(peer_line(r))}</text>"
        )
        parts.append(f'<text x="{max(x0, x1) + 4:.1f}" y="{y + 15}">{shown(value)}x</text>')
    parts.append(f'<line x1="{x(1):.1f}" y1="{top - 6}" x2="{x(1):.1f}" y2="{axis}" stroke="black"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def readme_with(text, new_table):
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        sys.exit(f"README.md has no {BEGIN} ... {END} block")
    return text[:start] + new_table + text[end + len(END):]


def sections(markdown):
    """Each heading's text (without #) and the text under it up to the next heading."""
    out, name, body = {}, None, []
    for line in markdown.splitlines():
        if line.startswith("#"):
            if name is not None:
                out[name] = "\n".join(body)
            name, body = line.lstrip("#").strip(), []
        else:
            body.append(line)
    if name is not None:
        out[name] = "\n".join(body)
    return out


def unsourced():
    """Figures not found in the BENCHMARKS.md section their row names."""
    found = sections(BENCHMARKS.read_text())
    missing = []
    for r in rows():
        for figure, section in ((r["swarrow"], r["section"]), (r["peer_value"], r["peer_section"])):
            if section not in found:
                missing.append(f"{r['job']}: no section '{section}' in BENCHMARKS.md")
            elif figure not in found[section]:
                missing.append(f"{r['job']}: {figure} is not in BENCHMARKS.md's section '{section}'")
    return missing


def main():
    readme = README.read_text()
    new_readme, new_svg = readme_with(readme, table()), svg()
    if sys.argv[1:] == ["--check"]:
        problems = unsourced()
        if new_readme != readme:
            problems.append("README.md's performance table differs from docs/perf.tsv: run scripts/perf-plot.py")
        if not SVG.exists() or SVG.read_text() != new_svg:
            problems.append("docs/perf.svg differs from docs/perf.tsv: run scripts/perf-plot.py")
        for p in problems:
            print(f"perf-plot: {p}", file=sys.stderr)
        sys.exit(1 if problems else 0)
    README.write_text(new_readme)
    SVG.write_text(new_svg)


if __name__ == "__main__":
    main()
