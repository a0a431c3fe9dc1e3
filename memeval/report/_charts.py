"""Charts as inline SVG written here, so the page needs no script library or network.

Each function takes plain summary records and returns SVG markup; every piece of
text that comes from a run (selector names, categories) passes through `escape`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from memeval.jsonenc import finite
from memeval.scoring.catalog import Metric

# Colour-blind-safe palette (Okabe–Ito), one colour per selector in summary order.
PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9",
                            "#D55E00", "#F0E442", "#000000")
FONT = "font-family:system-ui,sans-serif;font-size:11px"


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _svg(width: float, height: float, body: list[str], label: str) -> Markup:
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(label)}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        f'style="{FONT}">' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: Any, anchor: str = "start", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>'
            f"{escape(str(text))}</text>")


def legend(selectors: Sequence[str]) -> Markup:
    """An HTML legend (wraps better than SVG text) matching the chart colours."""
    items = "".join(
        f'<span class="lg"><i style="background:{colour(i)}"></i>{escape(s)}</span>'
        for i, s in enumerate(selectors))
    return Markup(f'<div class="legend">{items}</div>')


def metric_by_category(records: Sequence[Mapping[str, Any]], selectors: Sequence[str],
                       metric: str) -> Markup:
    """Horizontal bars of `metric` per category, one bar per selector, CI whiskers."""
    categories = sorted({str(r["category"]) for r in records})
    if not categories:
        return Markup('<p class="muted">no data</p>')
    by_key = {(str(r["selector"]), str(r["category"])): r for r in records}
    left, width, bar, gap = 130, 300, 9, 10
    group = bar * len(selectors) + gap
    height = 24 + group * len(categories) + 18
    body = [_text(left + width / 2, 12, metric, "middle", 'font-weight="600"')]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        x = left + tick * width
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="18" y2="{height - 16}" '
                    'stroke="#ccc" stroke-width="0.5"/>')
        body.append(_text(x, height - 4, f"{tick:g}", "middle", 'fill="#666"'))
    for ci, category in enumerate(categories):
        top = 22 + ci * group
        body.append(_text(left - 6, top + group / 2, category, "end",
                          'dominant-baseline="middle"'))
        for si, selector in enumerate(selectors):
            row = by_key.get((selector, category))
            y = top + si * bar
            value = finite(row.get(metric)) if row else None
            if value is None:
                body.append(_text(left + 2, y + bar - 1, "n/a", extra='fill="#999" '
                                  'font-size="8"'))
                continue
            low, high = finite(row.get(f"{metric}_ci_low")), finite(row.get(f"{metric}_ci_high"))
            tip = f"{selector} · {category}: {value:.3f}"
            if low is not None and high is not None:
                tip += f" [{low:.2f}, {high:.2f}]"
            tip += f" (n={row.get(f'{metric}_n', row.get('n_turns'))})"
            body.append(f'<rect x="{left}" y="{y:.1f}" width="{max(value * width, 0.5):.1f}" '
                        f'height="{bar - 2}" fill="{colour(si)}"><title>{escape(tip)}</title>'
                        "</rect>")
            if low is not None and high is not None:
                mid = y + (bar - 2) / 2
                body.append(f'<line x1="{left + low * width:.1f}" x2="{left + high * width:.1f}" '
                            f'y1="{mid:.1f}" y2="{mid:.1f}" stroke="#222" stroke-width="1"/>')
    return _svg(left + width + 20, height, body, f"{metric} per category and selector")


def quality_vs_cost(points: Sequence[Mapping[str, Any]], x_label: str) -> Markup:
    """Scatter: one point per selector, x = cost per turn, y = F1 with its CI."""
    if not points:
        return Markup('<p class="muted">no data</p>')
    left, top, width, height = 50, 16, 320, 200
    xs = [p["x"] for p in points]
    x_max = max(xs) or 1.0
    body = [f'<line x1="{left}" x2="{left + width}" y1="{top + height}" y2="{top + height}" '
            'stroke="#888"/>',
            f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + height}" stroke="#888"/>',
            _text(left + width / 2, top + height + 30, x_label, "middle"),
            _text(12, top + height / 2, "F1", "middle",
                  f'transform="rotate(-90 12 {top + height / 2})"')]
    for tick in (0, 0.5, 1):
        y = top + height - tick * height
        body.append(_text(left - 6, y + 3, f"{tick:g}", "end", 'fill="#666"'))
        body.append(f'<line x1="{left}" x2="{left + width}" y1="{y}" y2="{y}" stroke="#eee"/>')
    for tick in (0, 0.5, 1):
        body.append(_text(left + tick * width, top + height + 14, _short(tick * x_max), "middle",
                          'fill="#666"'))
    placed: list[tuple[float, float, float]] = []  # label boxes: x from, x to, baseline
    for p in points:
        x = left + (p["x"] / x_max) * width
        y = top + height - (p["y"] or 0) * height
        if p.get("low") is not None and p.get("high") is not None:
            y_high, y_low = top + height - p["high"] * height, top + height - p["low"] * height
            body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y_high:.1f}" y2="{y_low:.1f}" '
                        f'stroke="{p["colour"]}"/>')
        tip = f"{p['name']}: F1 {p['y']:.3f}, {x_label} {_short(p['x'])}"
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{p["colour"]}">'
                    f"<title>{escape(tip)}</title></circle>")
        label_y = _free_row(placed, x + 7, x + 7 + LABEL_CHAR_PX * len(str(p["name"])), y - 6)
        body.append(_text(x + 7, label_y, p["name"], extra='fill="#333"'))
    return _svg(left + width + 110, top + height + 40, body, "quality versus cost")


LABEL_CHAR_PX = 6.5  # width of a label character at the charts' font size, roughly
LABEL_ROW_PX = 13


def _free_row(placed: list[tuple[float, float, float]], x0: float, x1: float,
              y: float) -> float:
    """The first baseline at or below `y` where a label spanning x0..x1 overlaps none
    already placed; the box is recorded. Close points no longer print over each other."""
    while any(x0 < b1 and b0 < x1 and abs(y - by) < LABEL_ROW_PX for b0, b1, by in placed):
        y += LABEL_ROW_PX
    placed.append((x0, x1, y))
    return y


def _short(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) < 0.01:
        return f"{value:.2e}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def histograms(values: Mapping[str, Sequence[float]], selectors: Sequence[str],
               bins: int = 12) -> Markup:
    """Small multiples: how many surfaced bytes each turn carried, per selector."""
    everything = [v for s in selectors for v in values.get(s, ())]
    if not everything:
        return Markup('<p class="muted">no data</p>')
    if not any(everything):
        return Markup('<p class="muted">nothing surfaced on any turn</p>')
    top_value = max(everything) or 1.0
    step = top_value / bins
    panel_w, panel_h, left = 300, 60, 130
    body = []
    for si, selector in enumerate(selectors):
        counts = [0] * bins
        for v in values.get(selector, ()):
            counts[min(int(v / step), bins - 1) if step else 0] += 1
        peak = max(counts) or 1
        top = 8 + si * (panel_h + 14)
        body.append(_text(left - 6, top + panel_h / 2, selector, "end",
                          'dominant-baseline="middle"'))
        for bi, count in enumerate(counts):
            h = count / peak * panel_h
            x = left + bi * panel_w / bins
            tip = f"{selector}: {count} turns with {bi * step:,.0f}–{(bi + 1) * step:,.0f} bytes"
            body.append(f'<rect x="{x:.1f}" y="{top + panel_h - h:.1f}" '
                        f'width="{panel_w / bins - 1:.1f}" height="{max(h, 0.5):.1f}" '
                        f'fill="{colour(si)}"><title>{escape(tip)}</title></rect>')
        body.append(f'<line x1="{left}" x2="{left + panel_w}" y1="{top + panel_h}" '
                    f'y2="{top + panel_h}" stroke="#888"/>')
    bottom = 8 + len(selectors) * (panel_h + 14)
    body.append(_text(left, bottom + 2, "0", "middle", 'fill="#666"'))
    body.append(_text(left + panel_w, bottom + 2, f"{top_value:,.0f} bytes", "middle",
                      'fill="#666"'))
    return _svg(left + panel_w + 50, bottom + 10, body, "surfaced bytes per turn")


def agreement_sides(entry: Mapping[str, Any]) -> tuple[str, str]:
    """(rows, columns) judge names of an agreement record: `judge_a` labels the rows of
    its confusion table (older summaries said `against` and `judge`)."""
    if "judge_a" in entry:
        return str(entry["judge_a"]), str(entry.get("judge_b", "gold"))
    return str(entry.get("against", "gold")), str(entry.get("judge", "judge"))


def confusion(entry: Mapping[str, Any]) -> Markup:
    """A heatmap of one judge against another: rows one's verdicts, columns the other's."""
    table = entry.get("confusion") or {}
    labels = list(table) or ["relevant", "acceptable", "irrelevant"]
    seen = {c for row in table.values() for c in row}
    cols = [c for c in labels if c in seen] + sorted(seen - set(labels)) or labels
    peak = max([v for row in table.values() for v in row.values()] or [1]) or 1
    cell, left, top = 72, 96, 36
    rows_name, cols_name = agreement_sides(entry)
    body = [_text(left + cell * len(cols) / 2, 12, f"{cols_name} (columns)", "middle"),
            _text(4, top - 18, f"{rows_name} (rows)")]
    for ci, c in enumerate(cols):
        body.append(_text(left + ci * cell + cell / 2, top - 4, c[:10], "middle", 'fill="#666"'))
    for ri, r in enumerate(labels):
        body.append(_text(left - 4, top + ri * cell + cell / 2 + 4, r[:12], "end"))
        for ci, c in enumerate(cols):
            count = int((table.get(r) or {}).get(c, 0))
            shade = 0.08 + 0.8 * count / peak
            body.append(f'<rect x="{left + ci * cell}" y="{top + ri * cell}" width="{cell - 2}" '
                        f'height="{cell - 2}" fill="#0072B2" fill-opacity="{shade:.2f}"/>')
            body.append(_text(left + ci * cell + cell / 2, top + ri * cell + cell / 2 + 4,
                              count, "middle"))
    return _svg(left + cell * len(cols) + 10, top + cell * len(labels) + 6, body,
                "judge versus gold verdicts")


def delta_forest(rows: Sequence[Mapping[str, Any]], metric: Metric) -> Markup:
    """Forest plot: per category, B − A of `metric` with its paired CI around zero.

    The side labelled "B better" is the metric's declared good side: the right for
    higher-is-better metrics, the left for lower-is-better ones; colours follow the
    compare record's verdict, which reads the same declaration.
    """
    items = [(str(r["category"]), r[metric.name]) for r in rows if r.get(metric.name)]
    if not items:
        return Markup('<p class="muted">no paired turns</p>')
    spans = [abs(finite(c.get(k)) or 0) for _, c in items
             for k in ("ci_low", "ci_high", "mean_diff")]
    reach = max([*spans, 0.1])
    left, width, row_h = 130, 320, 20
    height = 28 + row_h * len(items)
    zero = left + width / 2
    upper_side, lower_side = ("B", "A") if metric.direction == "higher" else ("A", "B")
    body = [f'<line x1="{zero}" x2="{zero}" y1="14" y2="{height - 12}" stroke="#888"/>',
            _text(left, 10, f"−{reach:.2f} ({lower_side} better)", extra='fill="#666"'),
            _text(left + width, 10, f"+{reach:.2f} ({upper_side} better)", "end",
                  'fill="#666"')]
    for index, (category, c) in enumerate(items):
        y = 24 + index * row_h
        body.append(_text(left - 6, y + 4, category, "end"))
        mean, low, high = (finite(c.get(k)) for k in ("mean_diff", "ci_low", "ci_high"))
        if mean is None:
            body.append(_text(zero + 4, y + 4, "no pairs", extra='fill="#999"'))
            continue
        fill = {"better": "#1a7f37", "worse": "#b42318"}.get(c.get("significance"), "#667085")
        if low is not None and high is not None:
            body.append(f'<line x1="{zero + low / reach * width / 2:.1f}" '
                        f'x2="{zero + high / reach * width / 2:.1f}" y1="{y}" y2="{y}" '
                        f'stroke="{fill}" stroke-width="2"/>')
        tip = f"{category}: {mean:+.3f} (n={c.get('n_pairs')}, {c.get('significance')})"
        body.append(f'<circle cx="{zero + mean / reach * width / 2:.1f}" cy="{y}" r="4" '
                    f'fill="{fill}"><title>{escape(tip)}</title></circle>')
    return _svg(left + width + 20, height, body, f"change in {metric.label} per category")
