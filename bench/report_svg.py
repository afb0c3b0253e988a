"""The chart of docs/benchmarks.md, docs/benchmarks.svg: ops/s at 32 clients
of every durable system, with the empty gRPC call as a line, for
bench/report.py render. Standard library only.
"""

import html

from report_systems import COLOR, LABEL, SYSTEM_ORDER
from report_tables import find
from svg_chart import svg_open, y_grid

# The chart compares the durable systems; Redis everysec (not durable) is in
# the tables, where its 5-10x larger bars do not flatten the others.
CHART_SYSTEMS = [s for s in SYSTEM_ORDER if s[1] == "fsync"]


def render_svg(doc):
    groups = [("lock_cycle", 1000, "lock cycle\n1,000 resources"),
              ("lock_cycle", 1, "lock cycle\nhot resource"),
              ("fenced_write", 1000, "fenced write\n1,000 resources"),
              ("fenced_write", 1, "fenced write\nhot resource"),
              ("handoff", 1, "hand-off\n32 queued")]
    values = {}
    for w, r, _ in groups:
        for s in CHART_SYSTEMS:
            e = find(doc, s[0], s[1], w, r, 32)
            if e:
                values[(w, r, s)] = e["ops_per_s"]
    rpc = find(doc, "grpc-empty", "none", "rpc", 0, 32)
    top = max(list(values.values()) + ([rpc["ops_per_s"]] if rpc else []) + [1])
    scale = 10 ** len(str(int(top)))
    step = scale / 10
    while top / step < 4:
        step /= 2
    ymax = step * (int(top / step) + 1)
    width, height = 900, 440
    left, right, top_m, bottom = 70, 20, 50, 90
    plot_w, plot_h = width - left - right, height - top_m - bottom
    y = lambda v: top_m + plot_h * (1 - v / ymax)
    out = svg_open(
        width, height, width / 2,
        "ops/s at 32 clients, fsync before every acknowledgement (higher is better)",
        f'git {html.escape(doc["git_sha"][:12])}, {html.escape(doc["generated_at"])}, '
        f'{doc["machine"].get("cores")} cores shared by clients and servers; medians of '
        f'{doc["config"]["runs"]} runs; Redis everysec (not durable) is in the tables')
    out += y_grid(left, width - right, y, ymax, step)
    charted = [s for s in CHART_SYSTEMS if any(k[2] == s for k in values)] or CHART_SYSTEMS
    group_w = plot_w / len(groups)
    bar_w = group_w * 0.8 / len(charted)
    for gi, (w, r, name) in enumerate(groups):
        x0 = left + gi * group_w + group_w * 0.1
        for si, s in enumerate(charted):
            val = values.get((w, r, s))
            if val is None:
                continue
            x = x0 + si * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y(val):.1f}" width="{bar_w - 2:.1f}" '
                       f'height="{y(0) - y(val):.1f}" fill="{COLOR[s]}"/>')
            out.append(f'<text x="{x + bar_w / 2 - 1:.1f}" y="{y(val) - 3:.1f}" '
                       f'text-anchor="middle" font-size="10">{val:,.0f}</text>')
        for li, text in enumerate(name.split("\n")):
            out.append(f'<text x="{left + gi * group_w + group_w / 2:.1f}" '
                       f'y="{y(0) + 16 + 14 * li:.1f}" text-anchor="middle">{html.escape(text)}</text>')
    if rpc:
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(rpc["ops_per_s"]):.1f}" '
                   f'y2="{y(rpc["ops_per_s"]):.1f}" stroke="#333" stroke-dasharray="6 4"/>')
        out.append(f'<text x="{width - right - 4}" y="{y(rpc["ops_per_s"]) - 5:.1f}" '
                   f'text-anchor="end" fill="#333">empty gRPC call: {rpc["ops_per_s"]:,.0f}/s</text>')
    lx = left
    for s in charted:
        out.append(f'<rect x="{lx}" y="{height - 26}" width="12" height="12" fill="{COLOR[s]}"/>')
        out.append(f'<text x="{lx + 16}" y="{height - 16}">{html.escape(LABEL[s])}</text>')
        lx += 28 + 7 * len(LABEL[s])
    out.append("</svg>")
    return "\n".join(out) + "\n"

