"""The README's pictures, taken in Chromium from a real server of this checkout: `python -m ticketnet.bench.screenshots`."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from ticketnet.bench.browser import CHROMIUM, CHROMIUM_ARGS, free_port, wait_healthy
from ticketnet.paths import ROOT

OUT = ROOT / "docs" / "img"
# (file, page path and query, the heading to wait for, the charts that must be drawn, how far down to capture)
SHOTS = (
    ("heads.png", "heads?ticket=T-65052&block=2", "Heads", 3, 1500),
    ("interpretation.png", "interpretation?ticket=T-65052", "Interpretation", 2, 1500),
    ("encoder-heads.png", "heads?ticket=T-65052&router=larkfield-minilm&block=6", "Heads", 2, 1500),
    ("encoder-interpretation.png", "interpretation?ticket=T-65052&router=larkfield-minilm", "Interpretation", 2, 1500),
)
WIDTH = 1366


def take(out: Path = OUT, timeout: float = 180, theme: str = "light", width: int = WIDTH,
         shots: tuple = SHOTS) -> list[Path]:
    """Start `python -m dashboard`, open each of SHOTS and save it as a PNG under `out`; the written paths."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://localhost:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "dashboard", "--server.port", str(port), "--server.headless",
                             "true"], cwd=ROOT, env=os.environ.copy(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    written = []
    try:
        wait_healthy(url, proc, 60)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for name, path, heading, charts, height in shots:
                # The dashboard follows the browser's colour scheme, as a reader's OS setting would set it.
                tab = browser.new_page(viewport={"width": width, "height": height}, color_scheme=theme)
                tab.goto(f"{url}/{path}")
                tab.get_by_role("heading", name=heading).first.wait_for(timeout=timeout * 1000)
                tab.wait_for_function(
                    "n => { const c = [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')];"
                    " return c.length >= n && c.every(e => e.querySelector('canvas, svg')) &&"
                    " !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]'); }",
                    arg=charts, timeout=timeout * 1000)
                tab.wait_for_timeout(800)                    # Vega's last transition
                target = out / name
                tab.screenshot(path=str(target), full_page=False)
                written.append(target)
                tab.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ticketnet.bench.screenshots", description=__doc__)
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder for the PNGs (default {OUT.relative_to(ROOT)})")
    parser.add_argument("--theme", choices=("light", "dark"), default="light")
    parser.add_argument("--width", type=int, default=WIDTH, help=f"the window's width in px (default {WIDTH})")
    parser.add_argument("--only", action="append", metavar="NAME", help="take only these (e.g. heads.png)")
    args = parser.parse_args(argv)
    if not CHROMIUM.is_file():
        print(f"screenshots: {CHROMIUM} not found (apt-get install -y chromium)", file=sys.stderr)
        return 1
    shots = tuple(s for s in SHOTS if not args.only or s[0] in args.only)
    for path in take(args.out, theme=args.theme, width=args.width, shots=shots):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
