"""What the two charts of docs/benchmarks.md share (report_svg.py's bars,
scale_report.py's lines): the opening of the SVG document with its title
and subtitle, and the horizontal grid with its value labels. Standard
library only.
"""


def svg_open(width, height, title_x, title, subtitle):
    """The first lines of a chart `width` x `height`: the <svg> element, a
    white ground, `title` (bold) and `subtitle` (grey, HTML already) centred
    on `title_x`."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="{title_x}" y="22" text-anchor="middle" font-size="15" '
            f'font-weight="bold">{title}</text>',
            f'<text x="{title_x}" y="38" text-anchor="middle" fill="#555">{subtitle}</text>']


def y_grid(left, right_x, y, ymax, step):
    """A grid line from `left` to `right_x` every `step` from 0 to `ymax`
    (y(v): the line's height), each with its value to its left."""
    out = []
    v = 0
    while v <= ymax + 1e-9:
        out.append(f'<line x1="{left}" x2="{right_x}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,.0f}</text>')
        v += step
    return out
