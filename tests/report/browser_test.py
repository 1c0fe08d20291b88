#!/usr/bin/python3
"""The HTML report in a real browser: Debian's chromium, headless.

Usage: browser_test.py NNBENCH FIXTURE.json OUT_DIR

Writes the report of a fixed results file, loads it in chromium and checks:
no console message or uncaught error, every chart canvas painted (the page
records each canvas's painted pixels on the canvas element), one canvas per
figure the fixture supports, strings from results escaped (a model named
"<script>alert(1)</script>" is text). Then a screenshot of the same page:
a PNG of the window's size that is not blank. Exit 0 when all hold.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

# Figures the fixture's records support (src/report/charts.cpp): time per
# mini-batch; throughput against batch at 1 and at 2 threads (the renamed
# record is a model with one batch: no chart); speed-up and efficiency;
# training time; accuracy against time (one task); latency.
EXPECTED_CHARTS = 8
WIDTH, HEIGHT = 1200, 4000


def chromium_flags():
    return ["--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run",
            "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
            f"--window-size={WIDTH},{HEIGHT}"]


def png_pixels(path):
    """Width, height and the decompressed scanlines of a PNG (stdlib)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


def main():
    nnbench, fixture, out = sys.argv[1:4]
    chromium = shutil.which("chromium")
    if not chromium:
        print("chromium is not installed (scripts/setup test installs it)")
        return 1
    os.makedirs(out, exist_ok=True)
    html = os.path.abspath(os.path.join(out, "report.html"))
    subprocess.run([nnbench, "report", fixture, "-o", html], check=True)
    failures = []

    p = subprocess.run([chromium, *chromium_flags(), "--dump-dom",
                        "file://" + html], capture_output=True, text=True,
                       timeout=180)
    dom = p.stdout
    if p.returncode != 0 or "</html>" not in dom:
        failures.append(f"chromium failed ({p.returncode}): {p.stderr[-2000:]}")
    console = [l for l in p.stderr.splitlines()
               if "CONSOLE" in l or "Uncaught" in l]
    if console:
        failures.append("console messages:\n  " + "\n  ".join(console))
    canvases = re.findall(r"<canvas[^>]*>", dom)
    if len(canvases) != EXPECTED_CHARTS:
        failures.append(f"{len(canvases)} canvases, expected {EXPECTED_CHARTS}")
    for c in canvases:
        cid = re.search(r'id="([^"]*)"', c)
        painted = re.search(r'data-painted-pixels="(\d+)"', c)
        name = cid.group(1) if cid else c
        if not painted:
            failures.append(f"canvas {name}: the page never checked it")
        elif int(painted.group(1)) < 2000:
            failures.append(f"canvas {name}: {painted.group(1)} pixels painted")
    if f'data-charts="{EXPECTED_CHARTS}"' not in dom:
        failures.append("the page did not finish drawing its charts")
    if "<script>alert(1)</script>" in dom:
        failures.append("a model name reached the page as markup")
    if "&lt;script&gt;alert(1)&lt;/script&gt;" not in dom:
        failures.append("the escaped model name is not shown as text")

    shot = os.path.join(out, "report.png")
    p = subprocess.run([chromium, *chromium_flags(), f"--screenshot={shot}",
                        "file://" + html], capture_output=True, text=True,
                       timeout=180)
    if not os.path.exists(shot):
        failures.append(f"no screenshot: {p.stderr[-2000:]}")
    else:
        w, h, raw = png_pixels(shot)
        if (w, h) != (WIDTH, HEIGHT):
            failures.append(f"screenshot {w}x{h}, expected {WIDTH}x{HEIGHT}")
        # A blank page compresses to a handful of byte values.
        if len(set(raw[::97])) < 50:
            failures.append("the screenshot is blank")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(canvases)} charts checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
