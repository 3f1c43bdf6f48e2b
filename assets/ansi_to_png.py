#!/usr/bin/env python3
"""Render a terminal capture (tmux capture-pane -e -p) to a PNG, for README's screenshot.

Usage: tmux capture-pane -e -p -t SESSION | python3 assets/ansi_to_png.py OUT.png
Needs Pillow (pip install pillow) and DejaVu Sans Mono (Debian: fonts-dejavu-core).
Understands what the console draws: SGR reset, bold, dim, reverse, the 16 ANSI colours.
"""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
SIZE = 15
BG = (24, 26, 33)
FG = (214, 219, 229)
PALETTE = {
    30: (60, 63, 75), 31: (235, 100, 100), 32: (120, 200, 120), 33: (230, 190, 90),
    34: (100, 150, 235), 35: (200, 130, 220), 36: (90, 200, 210), 37: (214, 219, 229),
    90: (110, 115, 130), 91: (255, 130, 130), 92: (150, 230, 150), 93: (250, 215, 120),
    94: (130, 175, 255), 95: (225, 160, 240), 96: (120, 225, 235), 97: (255, 255, 255),
}
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def cells(line, state):
    """Yield (char, state) for each character, applying SGR codes as they come."""
    pos = 0
    for m in SGR.finditer(line):
        for ch in line[pos:m.start()]:
            yield ch, dict(state)
        codes = [int(c) if c else 0 for c in m.group(1).split(";")]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                state.clear()
            elif c == 1:
                state["bold"] = True
            elif c == 2:
                state["dim"] = True
            elif c == 7:
                state["reverse"] = True
            elif c in (22,):
                state.pop("bold", None)
                state.pop("dim", None)
            elif c == 27:
                state.pop("reverse", None)
            elif c == 39:
                state.pop("fg", None)
            elif c in PALETTE:
                state["fg"] = PALETTE[c]
            elif c == 38 and i + 2 < len(codes) and codes[i + 1] == 5:
                n = codes[i + 2]
                state["fg"] = PALETTE.get(30 + n if n < 8 else 82 + n, FG)
                i += 2
            i += 1
        pos = m.end()
    for ch in line[pos:]:
        yield ch, dict(state)


def main():
    out = sys.argv[1]
    lines = sys.stdin.read().rstrip("\n").split("\n")
    font = ImageFont.truetype(FONT, SIZE)
    bold = ImageFont.truetype(BOLD, SIZE)
    cw = round(font.getlength("M"))
    ch = SIZE + 4
    width = max(sum(1 for _ in cells(l, {})) for l in lines)
    img = Image.new("RGB", (cw * width + 20, ch * len(lines) + 20), BG)
    draw = ImageDraw.Draw(img)
    state = {}
    for row, line in enumerate(lines):
        for col, (c, st) in enumerate(cells(line, state)):
            fg = st.get("fg", FG)
            if st.get("dim"):
                fg = tuple(int(v * 0.6 + b * 0.4) for v, b in zip(fg, BG))
            bg = BG
            if st.get("reverse"):
                fg, bg = bg, fg
            x, y = 10 + col * cw, 10 + row * ch
            if bg != BG:
                draw.rectangle([x, y, x + cw, y + ch], fill=bg)
            if c != " ":
                draw.text((x, y + 1), c, font=bold if st.get("bold") else font, fill=fg)
    img.save(out)


if __name__ == "__main__":
    main()
