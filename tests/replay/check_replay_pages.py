#!/usr/bin/env python3
"""Browser test of simpact's replay pages (docs/replay.md).

Writes replay pages with `simpact scene FILE --html OUT` (a scene this script
makes from a seed, plus any scene files given) and any pages given ready-made,
opens each in headless Chromium from file://, and checks from the pixels of
its screenshots that:
  - each of the two 3D views (stock, simpact) shows bodies;
  - the bodies move between two timeline positions (frame 0 and a later one);
  - the energy plot holds both curves (the stock and simpact colours);
and, from the page's DOM after load, that the page reached its "ready" state
with no JavaScript error (the page records every error and unhandled
rejection, replay.html); Chromium's log is searched for uncaught errors too.

Exit 0: all pages pass; 1: a check failed; 77: no Chromium (ctest: skipped).
Standard library only (the PNG decoder is below).
"""
import argparse
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
# The page's fixed layout (replay.html, its CSS and LEGEND_W), in CSS pixels
# of a 1280 x 900 window: (left, top, right, bottom), right/bottom exclusive.
WINDOW = (1280, 900)
VIEWS = [(0, 70, 636, 476), (644, 70, 1280, 476)]  # below the run labels
PLOT = (64, 554, 1264, 714)                          # inside the axes
LEGEND = (1280 - 420 - 6, 540, 1280, 540 + 14 + 32 + 2)
VIEW_BACKGROUND = (0x1C, 0x20, 0x29)
CURVES = {"stock": (0xC8, 0x64, 0x1E), "simpact": (0x2F, 0x6F, 0xD0)}
# A pixel "differs" from a colour when a channel differs by more than this:
# antialiasing and swiftshader's rounding move channels by a few units; a
# body's shading differs from the background by far more.
CHANNEL_TOLERANCE = 24
# A view shows bodies when at least this share of its pixels are not
# background: one 1 cm ball framed in a 1 m scene covers ~0.3 %; the page
# frames the scene's bounds, so real scenes cover several percent.
MIN_BODY_SHARE = 0.002
# Bodies moved when at least this share of a view's pixels changed between
# the two timeline positions (a ball moving by its own radius changes ~0.1 %).
MIN_MOVED_SHARE = 0.0005
# A curve is present when at least this many plot pixels have its colour: a
# 2-pixel line across 1200 pixels has ~2400, a curve hidden but at its ends ~0.
MIN_CURVE_PIXELS = 200


def decode_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    at, idat, width = 8, b"", 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace:
                raise ValueError(f"{path}: PNG of depth {depth}, colour {color}, interlace {interlace}")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


class Shot:
    def __init__(self, path):
        self.width, self.height, self.channels, self.rows = decode_png(path)

    def pixel(self, x, y):
        at = x * self.channels
        return tuple(self.rows[y][at:at + 3])


def differs(p, q):
    return any(abs(a - b) > CHANNEL_TOLERANCE for a, b in zip(p, q))


def region(box):
    left, top, right, bottom = box
    return ((x, y) for y in range(top, bottom) for x in range(left, right))


def area(box):
    return (box[2] - box[0]) * (box[3] - box[1])


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, url, workdir, extra):
    profile = tempfile.mkdtemp(dir=workdir, prefix="profile-")
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
               "--enable-unsafe-swiftshader", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}",
               f"--window-size={WINDOW[0]},{WINDOW[1]}", "--virtual-time-budget=5000",
               "--enable-logging=stderr", "--v=0"] + extra + [url]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return result


def check_page(chromium, page, workdir, later_frame):
    """Returns a list of failures (empty: the page passes)."""
    failures = []
    url = "file://" + os.path.abspath(page)
    # The DOM after load, with impact 0's report opened as a click opens it.
    dom = run_chromium(chromium, url + "#impact=0", workdir, ["--dump-dom"])
    status = re.search(r'<body[^>]*data-status="([a-z]+)"', dom.stdout)
    if not status or status.group(1) != "ready":
        errors = re.search(r'<div id="errors">(.*?)</div>', dom.stdout, re.S)
        failures.append(f"page status {status.group(1) if status else 'missing'}"
                        f"{': ' + errors.group(1).strip() if errors and errors.group(1).strip() else ''}")
    for line in dom.stderr.splitlines():
        if "CONSOLE" in line and ("Uncaught" in line or "Error" in line):
            failures.append("console: " + line.strip())
    # simpact's run (the second) lists impacts: its report must be shown.
    simpact_impacts = re.findall(r'"impacts":\[(.)', dom.stdout)
    if len(simpact_impacts) >= 2 and simpact_impacts[1] == "{" and "<b>law</b>" not in dom.stdout:
        failures.append("impact 0's report (law, status, energies) is not shown")
    shots = []
    for frame in (0, later_frame):
        png = os.path.join(workdir, f"{os.path.basename(page)}.{frame}.png")
        shot = run_chromium(chromium, f"{url}#frame={frame}", workdir, [f"--screenshot={png}"])
        if not os.path.exists(png):
            failures.append(f"no screenshot at frame {frame}: {shot.stderr[-400:]}")
            return failures
        shots.append(Shot(png))
    for k, box in enumerate(VIEWS):
        name = ("stock", "simpact")[k]
        for shot, frame in zip(shots, (0, later_frame)):
            share = sum(differs(shot.pixel(x, y), VIEW_BACKGROUND) for x, y in region(box)) / area(box)
            if share < MIN_BODY_SHARE:
                failures.append(f"{name} view at frame {frame}: {share:.4%} of pixels show bodies "
                                f"(at least {MIN_BODY_SHARE:.2%} expected)")
        moved = sum(differs(shots[0].pixel(x, y), shots[1].pixel(x, y)) for x, y in region(box)) / area(box)
        if moved < MIN_MOVED_SHARE:
            failures.append(f"{name} view: {moved:.4%} of pixels changed between frames 0 and {later_frame} "
                            f"(at least {MIN_MOVED_SHARE:.2%} expected)")
    for name, colour in CURVES.items():
        count = sum(1 for x, y in region(PLOT)
                    if not (LEGEND[0] <= x < LEGEND[2] and LEGEND[1] <= y < LEGEND[3])
                    and not differs(shots[1].pixel(x, y), colour))
        if count < MIN_CURVE_PIXELS:
            failures.append(f"energy plot: {count} pixels of the {name} curve (at least {MIN_CURVE_PIXELS})")
    return failures


def random_scene(seed):
    """A scene of this test's own: spheres and boxes dropped in a row onto a
    ground plane, sizes and heights drawn from `seed`, elastic."""
    rng = random.Random(seed)
    bodies = [{"shape": "plane", "normal": [0, 1, 0], "offset": 0, "restitution": 1, "friction": 0.3}]
    for i in range(rng.randint(3, 7)):
        size = rng.uniform(0.05, 0.2)
        body = {"position": [i * 0.5, rng.uniform(0.4, 1.2), rng.uniform(-0.1, 0.1)],
                "velocity": [rng.uniform(-0.5, 0.5), 0, 0], "mass": rng.uniform(0.5, 2),
                "restitution": rng.choice([1, 0.8, 0.5]), "friction": 0.3}
        if rng.random() < 0.5:
            body.update(shape="sphere", radius=size)
        else:
            body.update(shape="box", half_extents=[size, size * rng.uniform(0.5, 1.5), size])
        bodies.append(body)
    return {"dt": 1 / 240, "steps": 360, "gravity": [0, -9.81, 0], "bodies": bodies}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simpact", required=True, help="the simpact binary")
    parser.add_argument("--scene", action="append", default=[], help="a scene file to replay (repeatable)")
    parser.add_argument("--page", action="append", default=[], help="a ready-made page to check (repeatable)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the scene this test makes")
    parser.add_argument("--steps", type=int, help="run the --scene files for this many steps instead")
    parser.add_argument("--keep", help="keep the pages and screenshots in this folder")
    parser.add_argument("--screenshot", help="also write the later frame of the first --page (or, with none,"
                                             " the first scene's page) here: docs/images/replay.png is made so")
    args = parser.parse_args()
    chromium = chromium_binary()
    if chromium is None:
        print("SKIPPED: no Chromium (apt-get install chromium, as .ci/install-deps does)")
        return SKIP
    workdir = args.keep or tempfile.mkdtemp(prefix="simpact-replay-")
    os.makedirs(workdir, exist_ok=True)
    scenes = [("generated", random_scene(args.seed))]
    for path in args.scene:
        with open(path) as f:
            scene = json.load(f)
        if args.steps is not None:
            scene["steps"] = args.steps
        scenes.append((os.path.basename(path), scene))
    pages = []
    for name, scene in scenes:
        scene_path = os.path.join(workdir, name + ".scene.json")
        with open(scene_path, "w") as f:
            json.dump(scene, f)
        page = os.path.join(workdir, name + ".html")
        result = subprocess.run([args.simpact, "scene", scene_path, "--html", page], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"FAIL {name}: simpact scene --html exited {result.returncode}: {result.stderr.strip()}")
            return 1
        pages.append((page, json.loads(result.stdout)["runs"][0]["frames"]))
    for page in args.page:
        with open(page) as f:
            steps = re.search(r'"step":\[([0-9,]*)\]', f.read())
        pages.append((page, len(steps.group(1).split(",")) if steps else 2))
    failed = 0
    for page, frames in pages:
        later = max(1, (frames - 1) * 3 // 5)
        failures = check_page(chromium, page, workdir, later)
        print(("FAIL " if failures else "ok   ") + f"{os.path.basename(page)} ({frames} frames, frame 0 vs {later})")
        for failure in failures:
            print("     " + failure)
        failed += bool(failures)
        shown = args.page[0] if args.page else pages[0][0]
        if args.screenshot and page == shown and not failures:
            shutil.copy(os.path.join(workdir, f"{os.path.basename(page)}.{later}.png"), args.screenshot)
    print(f"{len(pages) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
