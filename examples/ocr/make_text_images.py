#!/usr/bin/env python3
"""Renders images of printed text with a Debian font (fonts-dejavu-core).

  make_text_images.py demo OUT.png OUT.txt
      the demo's page: a few known lines on a light background; OUT.txt holds
      the lines, top to bottom, as the OCR example must read them
  make_text_images.py calib DIR COUNT [--size 480] [--seed S]
      COUNT random pages for int8 calibration of the detector (DIR/page_NNN.png):
      lines of 12 to 56 pixels, so headline-sized text is in the calibrated
      ranges too (with 12-40 the demo page's larger lines saturated the
      detector's neck)
  make_text_images.py lines DIR COUNT [--height 48] [--width 320] [--seed S]
      COUNT single-line crops for int8 calibration of the recogniser, laid
      out as the OCR example feeds them: the line scaled to the height, at
      most --width wide, on a grey canvas of that width

Everything is seeded, so the same command always writes the same files (other
seeds give held-out pages and lines for tests).
"""
import argparse
import os
import random
import sys

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf"]

# The demo page: what the OCR example must print, one entry per line.
# Lines short enough for the recogniser's 320x48 input (at most about 7
# times as wide as high), so none is squeezed.
DEMO_LINES = [
    "OpenRKNN OCR demo",
    "PP-OCRv4 on the NPU",
    "Invoice 2026-11-27",
    "Total 42.50 EUR",
    "Hello World 12345",
]

WORDS = ("the quick brown fox jumps over lazy dog npu rockchip model tensor quant layer "
         "open source runtime invoice total date order price street city apple river "
         "green light 2024 2025 2026 0 1 2 3 4 5 6 7 8 9 10 42 99 3.14 12:30 A-7 OK").split()


def font(name, size):
    path = os.path.join(FONT_DIR, name)
    if not os.path.exists(path):
        sys.exit(f"missing font {path}: install the Debian package fonts-dejavu-core")
    return ImageFont.truetype(path, size)


def demo_page(out_png, out_txt):
    width, height = 640, 400
    img = Image.new("RGB", (width, height), (245, 243, 236))
    draw = ImageDraw.Draw(img)
    y = 30
    sizes = [34, 30, 30, 32, 30]
    for line, size in zip(DEMO_LINES, sizes):
        f = font("DejaVuSans.ttf", size)
        draw.text((40, y), line, fill=(20, 20, 30), font=f)
        y += size + 40
    img.save(out_png)
    with open(out_txt, "w") as f:
        f.write("\n".join(DEMO_LINES) + "\n")


def random_text(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words))


def random_colours(rng):
    bg = tuple(rng.randint(170, 255) for _ in range(3))
    fg = tuple(rng.randint(0, 90) for _ in range(3))
    return (fg, bg) if rng.random() < 0.85 else (bg, fg)  # some pages are light text on dark


def calib_pages(out_dir, count, size, seed):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    for k in range(count):
        fg, bg = random_colours(rng)
        img = Image.new("RGB", (size, size), bg)
        draw = ImageDraw.Draw(img)
        y = rng.randint(4, 30)
        while y < size - 20:
            px = rng.randint(12, 56)
            f = font(rng.choice(FONTS), px)
            draw.text((rng.randint(4, size // 3), y), random_text(rng, rng.randint(1, 5)), fill=fg, font=f)
            y += px + rng.randint(8, 60)
        img.save(os.path.join(out_dir, f"page_{k:03d}.png"))


def calib_lines(out_dir, count, height, width, seed):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    for k in range(count):
        fg, bg = random_colours(rng)
        f = font(rng.choice(FONTS), rng.randint(28, 44))
        text = random_text(rng, rng.randint(1, 4))
        left, top, right, bottom = f.getbbox(text)
        pad = rng.randint(2, 10)
        line = Image.new("RGB", (right - left + 2 * pad, bottom - top + 2 * pad), bg)
        ImageDraw.Draw(line).text((pad - left, pad - top), text, fill=fg, font=f)
        w = min(width, max(1, round(line.width * height / line.height)))
        canvas = Image.new("RGB", (width, height), (128, 128, 128))
        canvas.paste(line.resize((w, height), Image.BILINEAR), (0, 0))
        canvas.save(os.path.join(out_dir, f"line_{k:03d}.png"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["demo", "calib", "lines"])
    parser.add_argument("out")
    parser.add_argument("arg")
    parser.add_argument("--size", type=int, default=480)
    parser.add_argument("--height", type=int, default=48)
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--seed", type=int, default=None)
    a = parser.parse_args()
    if a.kind == "demo":
        demo_page(a.out, a.arg)
    elif a.kind == "calib":
        calib_pages(a.out, int(a.arg), a.size, 20261127 if a.seed is None else a.seed)
    else:
        calib_lines(a.out, int(a.arg), a.height, a.width, 48320 if a.seed is None else a.seed)


if __name__ == "__main__":
    main()
