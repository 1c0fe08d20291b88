#!/usr/bin/python3
"""The HTML report in a real browser: Debian's chromium, headless.

Usage: browser_test.py NNBENCH FIXTURE.json OUT_DIR

Writes the report of a fixed results file, loads it in chromium and checks:
no console message or uncaught error, every chart canvas painted (the page
records each canvas's painted pixels on the canvas element), one canvas per
figure the fixture supports, strings from results escaped (a model named
"<script>alert(1)</script>" is text). Then a screenshot of the same page:
a PNG of the window's size that is not blank.

The first screen (the fixture has two engines): the page opens with the
question and a verdict per model before any chart, and a screenshot of the
first 1200x800 pixels shows the answer's box. The figures as a reader sees
them: integer ticks on thread axes, a log axis where the medians span a
decade, and one colour per engine in every chart. Exit 0 when all hold.
"""
import json
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


def chromium_flags(width=WIDTH, height=HEIGHT):
    return ["--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run",
            "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
            f"--window-size={width},{height}"]


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


def unfiltered_rgb(width, height, raw):
    """RGB(A) rows of a PNG's scanlines, PNG filters undone (8-bit)."""
    bpp = (len(raw) // height - 1) // width
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return bpp, rows


def canvas_data(dom):
    """Each canvas's id and data-* attributes, HTML entities undone."""
    out = {}
    for tag in re.findall(r"<canvas[^>]*>", dom):
        attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', tag))
        out[attrs.get("id", "?")] = {
            k: html_unescape(v) for k, v in attrs.items()}
    return out


def html_unescape(s):
    import html
    return html.unescape(s)


def medians_span_a_decade(fixture):
    """From the fixture itself: throughput medians (ok) over a 10x range."""
    ms = [r["stats_seconds"]["median"]
          for r in json.load(open(fixture))["results"]
          if r.get("kind", "throughput") == "throughput" and r["state"] == "ok"]
    return max(ms) / min(ms) >= 10


def check_figures(dom, fixture, failures):
    canvases = canvas_data(dom)
    for cid in ("speedup", "efficiency"):
        c = canvases.get(cid)
        if not c:
            failures.append(f"no {cid} chart")
            continue
        ticks = json.loads(c.get("data-x-ticks", "[]"))
        if not ticks or any(not t.isdigit() for t in ticks):
            failures.append(f"{cid}: thread ticks {ticks} are not integers")
    t = canvases.get("time-per-batch", {})
    want = "logarithmic" if medians_span_a_decade(fixture) else "linear"
    if t.get("data-y-type") != want:
        failures.append(f"time per mini-batch: a {t.get('data-y-type')} "
                        f"axis, expected {want}")
    # One colour per engine: every series naming an engine has its colour.
    engines = ("torch", "onednn")
    seen = {}
    for c in canvases.values():
        for label, colour in json.loads(c.get("data-series", "[]")):
            words = str(label).split()
            for e in engines:
                if e in words:
                    seen.setdefault(e, set()).add(colour.split(",")[0])
    for e in engines:
        if len(seen.get(e, ())) != 1:
            failures.append(f"engine {e} drawn in colours {seen.get(e)}")
    if len({min(v) for v in seen.values() if v}) != len(seen):
        failures.append(f"two engines share a colour: {seen}")


def check_first_screen(chromium, html, out, failures):
    answer = html_unescape(open(html).read())
    first = answer.find('<section id="answer">')
    if first < 0 or first > answer.find("<canvas"):
        failures.append("the page does not open with the answer")
    elif "Which engine is fastest on this machine?" not in answer:
        failures.append("the first screen does not ask the question")
    else:
        box = answer[first:answer.find("</section>", first)]
        for model in ("mnist-mlp",):
            if f"<td>{model}</td>" not in box:
                failures.append(f"no verdict for {model}")
        if not re.search(r"(faster than|tie:)", box):
            failures.append("no verdict sentence in the answer")
        if "logical CPUs" not in box or "engines: " not in box:
            failures.append("the answer does not name the machine and engines")
    shot = os.path.join(out, "first_screen.png")
    p = subprocess.run(
        [chromium, *chromium_flags(1200, 800), f"--screenshot={shot}",
         "file://" + html], capture_output=True, text=True, timeout=180)
    if not os.path.exists(shot):
        failures.append(f"no first-screen screenshot: {p.stderr[-2000:]}")
        return
    w, h, raw = png_pixels(shot)
    bpp, rows = unfiltered_rgb(w, h, raw)
    # The answer's background (#eef5ea) on the first screen.
    want = bytes([0xee, 0xf5, 0xea])
    box = sum(1 for r in rows for i in range(0, len(r), bpp)
              if r[i:i + 3] == want)
    if box < 20000:
        failures.append(f"first screen: {box} pixels of the answer's box, "
                        "expected a visible box")


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

    check_figures(dom, fixture, failures)
    check_first_screen(chromium, html, out, failures)

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
