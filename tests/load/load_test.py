"""Load test: many browser sessions at once against one real `streamlit run dashboard/app.py` server.

    .venv/bin/python -m tests.load.load_test --sessions 8 --seconds 60        (or: make load-test-browser)

Starts the server on a free localhost port, launches one Debian chromium (Playwright) and opens one browser
context per session, so every session is a separate Streamlit session with its own cookies and websocket. For
`--seconds` each session loops: open Heads with a ticket of its own in the URL (`/heads?ticket=T-…`), change
the query row, go to Interpretation and back to Tickets through the sidebar, then in turn pick another ticket
through the search box and a click on the table, route a typed ticket, or visit The formula / Verification /
Cost. Sessions pause `--think` seconds (random, between the two values) between steps.

A step's render time runs from the navigation or click to the end of the script run it causes, with every
chart drawn, no spinner or skeleton left and the step's own content on the page. Errors: an exception or error
panel on a page, a step that does not finish within `--step-timeout`, a page crash, a JavaScript error, a
console error, an HTTP 5xx, a request to anything but localhost (chromium resolves no other host name), a lost
websocket, a traceback in the server log. The server's resident memory (its process and any children, from
/proc) is sampled every 0.5 s: idle before the sessions, peak during the load (and the kernel's high-water
mark), and `--after` seconds after every session closed (Streamlit keeps a closed session's state for two
minutes in case it reconnects; Python keeps freed memory for reuse, so this is not back to the idle figure).

Prints a table, writes artifacts/load_test.json (and the server log beside it) and exits 1 if any error was
seen. Linux only (reads /proc). Bounded: new steps stop after `--seconds`, each step has a timeout, and the
whole run has a hard deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[2]

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402
from ticketnet.bench.load.procfs import cpu_s, machine_busy, tree, tree_rss_mb  # noqa: E402
from ticketnet.bench.load.procfs import status_kb as _status_kb  # noqa: E402

ARTIFACTS = ROOT / "artifacts"
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}
VIEWPORT = {"width": 1280, "height": 1000}

# Counts the script runs this document has seen start (stApp's data-test-script-state turning "running"), so a
# step can wait for the run it caused to start and finish, and says whether the page is at rest.
INIT_JS = """
(() => {
  window.__stRuns = 0;
  let last = null;
  const look = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app ? app.getAttribute('data-test-script-state') : null;
    if (s !== last) { if (s === 'running') window.__stRuns++; last = s; }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true,
                                                attributeFilter: ['data-test-script-state']});
  window.__stIdle = () => {
    look();
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
    if (document.querySelector('[data-testid="stSpinner"], [data-testid="stSkeleton"], ' +
                               '[data-testid="stAppSkeleton"], [data-testid="stStatusWidgetRunningIcon"]')) return false;
    for (const c of document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
      if (!c.querySelector('canvas, svg')) return false;
    return true;
  };
})();
"""
# A step is over when the page is at rest and either a new run was seen to start or the step's own outcome is on
# the page (under load the frontend can get "run started" and "run finished" in one batch, and never shows
# "running"); the outcome and the content are then checked again from Python.
SETTLED_JS = "([n, done]) => window.__stIdle() && (window.__stRuns > n || (done !== null && (0, eval)(done)()))"


def heading_js(pattern: str) -> str:
    return (f"() => [...document.querySelectorAll('h1, h2, h3')].some(h => new RegExp({json.dumps(pattern)})"
            f".test(h.textContent))")


def ticket_js(ticket: str) -> str:
    return f"() => new URLSearchParams(location.search).get('ticket') === {json.dumps(ticket)}"

TYPED = [
    "my card was charged twice for order {n}, please refund one of the payments",
    "the parcel for order {n} never arrived and tracking has said in transit for nine days",
    "I want to send back the lamp from order {n}, it does not fit; how do I return it?",
    "cannot log in since the password reset, the app says my account {n} is locked",
    "the discount code was not applied to order {n} and I paid full price",
]


# -- memory ---------------------------------------------------------------------------------------------------
def browser_pids(driver_pid: int, server_pid: int) -> set[int]:
    """This script's processes but the server's, and every chromium process of the same profile (chromium's zygote
    forks renderers that are not all children of the browser process)."""
    ours = tree(driver_pid) - tree(server_pid)
    dirs = set()
    for p in ours:
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            dirs |= set(re.findall(r"--user-data-dir=(\S+)", cmd))
        except OSError:
            pass
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and dirs:
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if any(f"--user-data-dir={d}" in cmd for d in dirs):
                ours.add(int(proc.name))
    return ours


async def sample_memory(pid: int, samples: list[tuple[float, float]], stop: asyncio.Event, t0: float) -> None:
    while not stop.is_set():
        samples.append((time.monotonic() - t0, tree_rss_mb(pid)))
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except asyncio.TimeoutError:
            pass


# -- one session -----------------------------------------------------------------------------------------------
class Stats:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter = Counter()
        self.samples: list[str] = []
        self.loops = Counter()

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        if len(self.samples) < 40:
            self.samples.append(f"{kind}: {detail[:300]}")


class StepFailed(Exception):
    pass


# Opened at /heads, Streamlit's frontend first looks for its server under /heads/ (/heads/_stcore/health and
# /heads/_stcore/host-config answer 404), then at /; the browser logs those two 404s. Not an error of the app.
_PROBE = re.compile(r"^http://[^/]+/[^_][^/]*/_stcore/(health|host-config)$")


def _base_path_probe(message) -> bool:
    return "404" in message.text and bool(_PROBE.match(message.location.get("url") or ""))


class Session:
    def __init__(self, i: int, url: str, browser, tickets: list[str], texts: dict[str, str], stats: Stats,
                 args) -> None:
        self.i, self.url, self.browser, self.stats, self.args = i, url, browser, stats, args
        self.tickets, self.texts = tickets, texts
        self.rng = random.Random(1000 + i)

    def _listen(self, page) -> None:
        s, i = self.stats, self.i
        page.on("crash", lambda _: s.error("page crash", f"session {i}"))
        page.on("pageerror", lambda e: s.error("javascript error", f"session {i}: {e}"))
        page.on("console", lambda m: m.type == "error" and not _base_path_probe(m)
                and s.error("console error", f"session {i}: {m.text} ({m.location.get('url')})"))
        page.on("response", lambda r: r.status >= 500 and s.error("http 5xx", f"session {i}: {r.status} {r.url}"))
        page.on("request", lambda r: (urlparse(r.url).hostname or "localhost") not in LOCAL_HOSTS
                and not r.url.startswith(("data:", "blob:", "about:"))
                and s.error("non-local request", f"session {i}: {r.url}"))

    async def _settled(self, page, before: int, done: str | None) -> None:
        await page.wait_for_function(SETTLED_JS, arg=[before, done], timeout=self.args.step_timeout * 1000,
                                     polling=100)

    async def _check(self, page, what: str) -> None:
        for testid, kind in (("stException", "exception on page"), ("stAlertContentError", "error panel")):
            n = await page.locator(f'[data-testid="{testid}"]').count()
            if n:
                text = await page.locator(f'[data-testid="{testid}"]').first.inner_text()
                raise StepFailed(f"{kind}|{what}: {text}")

    async def step(self, page, kind: str, action, expect=None, done: str | None = None) -> None:
        """Run `action` (which causes one script run), wait until it has rendered, check the page, time it."""
        before = await page.evaluate("window.__stRuns || 0")
        t = time.monotonic()
        try:
            await action()
            await self._settled(page, 0 if kind.startswith("open") else before, done)
            if expect is not None:
                await expect()
            elapsed = time.monotonic() - t
            await self._check(page, kind)
        except StepFailed as exc:
            k, _, detail = str(exc).partition("|")
            self.stats.error(k, f"session {self.i}, {detail}")
            raise
        except Exception as exc:  # Playwright timeouts and failures
            name = "timeout" if "Timeout" in type(exc).__name__ else "step failed"
            where = await self._where(page, kind)
            self.stats.error(name, f"session {self.i}, {kind}: {str(exc).splitlines()[0]} [{where}]")
            raise StepFailed(str(exc)) from None
        self.stats.times[kind].append(elapsed)

    async def _where(self, page, kind: str) -> str:
        """The page's state when a step failed (script and connection state, runs seen, URL), and a screenshot."""
        try:
            state = await page.evaluate("() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
                                        " return [a?.getAttribute('data-test-script-state'),"
                                        " a?.getAttribute('data-test-connection-state'), window.__stRuns]; }")
            folder = ARTIFACTS / "load_test_failures"
            folder.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"\W+", "_", f"session{self.i}_{kind}")[:80]
            await page.screenshot(path=str(folder / f"{name}.png"), timeout=20_000)
            return f"script {state[0]}, connection {state[1]}, runs {state[2]}, {page.url}"
        except Exception as exc:  # noqa: BLE001 - the page may be gone
            return f"state unknown: {str(exc).splitlines()[0][:80]}"

    async def think(self) -> None:
        lo, hi = self.args.think
        await asyncio.sleep(self.rng.uniform(lo, hi))

    async def _url_ticket(self, page, ticket: str) -> None:
        await page.wait_for_function("t => new URLSearchParams(location.search).get('ticket') === t", arg=ticket,
                                     timeout=10_000)

    async def _visible(self, locator) -> None:
        await locator.first.wait_for(state="visible", timeout=10_000)

    # -- the steps: a cycle, each session entering it at its own place ----------------------------------------
    # 0 open Heads with ?ticket= · 1 change the query row · 2 sidebar to Interpretation · 3 sidebar to Tickets ·
    # 4 on Tickets, in turn: search the table and click the row / route a typed ticket / visit a lesson page.
    # A session that enters at step k first opens the page step k starts from, with its ticket in the URL.
    ENTRY = {1: "/heads", 2: "/", 3: "/interpretation", 4: "/"}

    def _ticket(self, n: int) -> str:
        return self.tickets[n % len(self.tickets)]

    async def _expect_ticket_page(self, page, tid: str, heading, text: str | None = None) -> None:
        await self._url_ticket(page, tid)
        await self._visible(page.get_by_role("heading", name=heading))
        if text:
            await self._visible(page.get_by_text(text, exact=False))

    async def open_page(self, page, path: str, tid: str, text: str | None = None) -> None:
        name = {"/heads": "Heads", "/": "Tickets", "/interpretation": "Interpretation"}[path]
        heading = {"/heads": re.compile(r"Block 1: the \d+ heads"), "/": re.compile("^Tickets$"),
                   "/interpretation": re.compile("What each token does")}[path]
        await self.step(page, f"open {name} with ?ticket=", lambda: page.goto(f"{self.url}{path}?ticket={tid}"),
                        lambda: self._expect_ticket_page(page, tid, heading, text), heading_js(heading.pattern))

    async def do_step(self, page, k: int, n: int) -> None:
        tid = self._ticket(n)
        nav = page.locator('[data-testid="stSidebarNav"] a')
        if k == 0:
            await self.open_page(page, "/heads", tid, self.texts[tid][:30])
        elif k == 1:
            row = 1 + (n + self.i) % 3

            async def pick_row():
                await page.locator('[data-testid="stSelectbox"]', has_text="Query row").click()
                await page.keyboard.type(f"{row} · ")
                await page.keyboard.press("Enter")

            await self.step(page, "Heads: change query row", pick_row,
                            lambda: self._visible(page.get_by_role("heading", name=re.compile(rf"\(position {row}\)"))),
                            heading_js(rf"\(position {row}\)"))
        elif k == 2:
            await self.step(page, "sidebar: Interpretation", lambda: nav.filter(has_text="Interpretation").click(),
                            lambda: self._expect_ticket_page(page, tid, re.compile("What each token does")),
                            heading_js("What each token does"))
        elif k == 3:
            await self.step(page, "sidebar: Tickets", lambda: nav.filter(has_text="Tickets").first.click(),
                            lambda: self._expect_ticket_page(page, tid, re.compile("^Tickets$")), heading_js("^Tickets$"))
        elif (n + self.i) % 3 == 0:                              # search the table, click the row
            other = self._ticket(n + 7)
            search = page.get_by_role("textbox", name="Search id or text")

            async def search_it():
                await search.fill(other)
                await search.press("Enter")

            await self.step(page, "Tickets: search the table", search_it,
                            lambda: self._visible(page.get_by_text("1 of ", exact=False)),
                            "() => /(^|\\n)1 of \\d/.test(document.body.innerText)")

            async def click_row():
                grid = page.locator('[data-testid="stDataFrame"]').last
                await grid.scroll_into_view_if_needed()
                box = await grid.bounding_box()
                await page.mouse.click(box["x"] + 15, box["y"] + 35 + 17)

            await self.step(page, "Tickets: click a table row", click_row, lambda: self._url_ticket(page, other),
                            ticket_js(other))
        elif (n + self.i) % 3 == 1:                              # write a ticket
            typed = self.rng.choice(TYPED).format(n=f"{self.i:02d}{n:03d}")
            box = page.get_by_role("textbox", name="Ticket text")
            if not await box.is_visible():
                await page.get_by_text("Write your own ticket").click()
            await box.fill(typed)
            await self.step(page, "Tickets: route a typed ticket",
                            lambda: page.get_by_role("button", name="Route this ticket").click(),
                            lambda: self._url_ticket(page, "custom"), ticket_js("custom"))
        else:                                                    # a lesson page
            title = ("The formula", "Verification", "Cost")[(n // 3 + self.i) % 3]
            await self.step(page, f"sidebar: {title}", lambda: nav.filter(has_text=title).click(),
                            lambda: self._visible(page.get_by_role("heading", name=title, exact=True)),
                            heading_js(f"^{re.escape(title)}$"))

    async def run(self, start_at: float, deadline: float) -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        context = await self.browser.new_context(viewport=VIEWPORT)
        await context.add_init_script(INIT_JS)
        page = await context.new_page()
        page.set_default_timeout(self.args.step_timeout * 1000)
        self._listen(page)
        k, n = self.i % 5, 0                                     # where in the cycle, which loop
        entering = k != 0
        try:
            while time.monotonic() < deadline:
                try:
                    if entering:
                        await self.open_page(page, self.ENTRY[k], self._ticket(n))
                        entering = False
                        await self.think()
                        continue
                    await self.do_step(page, k, n)
                    self.stats.loops["steps ok"] += 1
                except StepFailed:
                    self.stats.loops["steps failed"] += 1
                    entering = k != 0                            # start again from a fresh page load
                    await asyncio.sleep(1)
                    continue
                k = (k + 1) % 5
                n += k == 0
                await self.think()
        finally:
            await context.close()


# -- the run ---------------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    xs = sorted(values)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def server_tracebacks(log: Path) -> list[str]:
    text = log.read_text(errors="replace") if log.is_file() else ""
    return [m.group(0)[:300] for m in re.finditer(r"Traceback \(most recent call last\):[\s\S]{0,400}", text)]


async def main_async(args) -> dict:
    from playwright.async_api import async_playwright

    rows = list(csv.DictReader(open(ROOT / "data" / "valid.csv", encoding="utf-8")))
    rng = random.Random(0)
    rng.shuffle(rows)
    texts = {r["ticket_id"]: r["text"] for r in rows}
    ids = [r["ticket_id"] for r in rows if len(r["text"]) >= 30]
    per = max(8, len(ids) // args.sessions)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = ARTIFACTS / "load_test_server.log"
    log.write_text("")
    env = {"TICKETNET_TORCH_THREADS": str(args.threads)} if args.threads else {}
    stats = Stats()
    samples: list[tuple[float, float]] = []
    t0 = time.monotonic()
    with streamlit_server(env, log) as (url, proc):
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample_memory(proc.pid, samples, stop, t0))
        await asyncio.sleep(2)
        idle = tree_rss_mb(proc.pid)
        async with async_playwright() as p:
            browser = await p.chromium.launch(
                executable_path=str(CHROMIUM),
                args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost"])
            start = time.monotonic()
            load_from = start - t0
            server_cpu0 = cpu_s(tree(proc.pid))
            client_cpu0 = cpu_s(browser_pids(os.getpid(), proc.pid))
            busy0 = machine_busy()
            deadline = start + args.seconds
            sessions = [Session(i, url, browser, ids[i * per:(i + 1) * per] or ids, texts, stats, args)
                        for i in range(args.sessions)]
            tasks = [asyncio.create_task(s.run(start + i * args.stagger, deadline)) for i, s in enumerate(sessions)]
            hard = args.seconds + args.sessions * args.stagger + 2 * args.step_timeout + 60
            done, pending = await asyncio.wait(tasks, timeout=hard)
            for t in pending:
                stats.error("session did not stop", "cancelled at the hard deadline")
                t.cancel()
            for t in done:
                if t.exception() is not None:
                    stats.error("session failed", repr(t.exception()))
            closed_at = time.monotonic()
            server_cpu = cpu_s(tree(proc.pid)) - server_cpu0
            client_cpu = cpu_s(browser_pids(os.getpid(), proc.pid)) - client_cpu0
            busy1 = machine_busy()
            await browser.close()
        load_until = closed_at - t0
        peak = max((m for t, m in samples if load_from <= t <= load_until), default=float("nan"))
        await asyncio.sleep(args.after)
        after = tree_rss_mb(proc.pid)
        hwm = _status_kb(proc.pid, "VmHWM") / 1024
        stop.set()
        await sampler
        alive = proc.poll() is None
    if not alive:
        stats.error("server died", "the streamlit process exited during the run")
    for tb in server_tracebacks(log):
        stats.error("server traceback", tb)

    every = [x for v in stats.times.values() for x in v]
    report = {
        "sessions": args.sessions, "seconds": args.seconds, "think_s": list(args.think),
        "cores": os.cpu_count(), "torch_threads": args.threads or 1,
        "page_loads": len(every), "loops": dict(stats.loops),
        "errors": sum(stats.errors.values()), "errors_by_kind": dict(stats.errors), "error_samples": stats.samples,
        "render_s": {"p50": pct(every, 0.5), "p95": pct(every, 0.95), "max": max(every, default=float("nan"))},
        "render_s_by_step": {k: {"n": len(v), "p50": pct(v, 0.5), "p95": pct(v, 0.95)}
                             for k, v in sorted(stats.times.items())},
        "load_wall_s": round(load_until - load_from, 1),
        "cpu_s": {"server": round(server_cpu, 1), "browser_and_driver": round(client_cpu, 1),
                  "machine_busy_fraction": round((busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]), 3)},
        "memory_mb": {"idle_before": idle, "peak_sampled": peak, "peak_kernel_hwm": hwm,
                      "after_close": after, "after_close_s": args.after},
        "memory_samples": [(round(t, 1), round(m, 1)) for t, m in samples[::2]],
    }
    return report


def print_report(r: dict) -> None:
    m = r["memory_mb"]
    print(f"\nLoad test: {r['sessions']} sessions × {r['seconds']} s on {r['cores']} cores "
          f"({r['torch_threads']} torch thread per computation), think {r['think_s'][0]}–{r['think_s'][1]} s")
    print(f"  page loads / reruns      {r['page_loads']} timed, {r['loops'].get('steps failed', 0)} failed")
    print(f"  errors                   {r['errors']}  {r['errors_by_kind'] or ''}")
    print(f"  render time p50 / p95    {r['render_s']['p50']:.2f} s / {r['render_s']['p95']:.2f} s "
          f"(max {r['render_s']['max']:.2f} s)")
    print(f"  server memory            idle {m['idle_before']:.0f} MB · peak {m['peak_sampled']:.0f} MB "
          f"(kernel high-water {m['peak_kernel_hwm']:.0f} MB) · {m['after_close_s']:.0f} s after close "
          f"{m['after_close']:.0f} MB")
    print(f"\n  {'step':34} {'n':>5} {'p50 s':>7} {'p95 s':>7}")
    for k, v in r["render_s_by_step"].items():
        print(f"  {k:34} {v['n']:>5} {v['p50']:>7.2f} {v['p95']:>7.2f}")
    c = r["cpu_s"]
    print(f"  CPU during the load      server {c['server']:.0f} s · browser {c['browser_and_driver']:.0f} s "
          f"over {r['load_wall_s']:.0f} s on {r['cores']} cores (machine {c['machine_busy_fraction']:.0%} busy)")
    for s in r["error_samples"][:15]:
        print("  !", s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20, help="concurrent browser sessions (default 20)")
    ap.add_argument("--seconds", type=float, default=120, help="how long sessions keep starting steps (default 120)")
    ap.add_argument("--think", type=float, nargs=2, default=(1.0, 4.0), metavar=("MIN", "MAX"),
                    help="pause between a session's steps, seconds (default 1 4)")
    ap.add_argument("--stagger", type=float, default=1.0, help="seconds between session starts (default 1)")
    ap.add_argument("--step-timeout", type=float, default=180, help="seconds one step may take (default 180)")
    ap.add_argument("--after", type=float, default=60, help="seconds to wait after closing before the last "
                                                             "memory reading (default 60)")
    ap.add_argument("--threads", type=int, default=0, help="TICKETNET_TORCH_THREADS for the server (default: "
                                                            "the dashboard's own default, 1)")
    ap.add_argument("--out", type=Path, default=ARTIFACTS / "load_test.json")
    args = ap.parse_args(argv)
    if not CHROMIUM.is_file():
        print(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium)", file=sys.stderr)
        return 2
    if args.sessions < 1 or args.seconds <= 0:
        ap.error("--sessions and --seconds must be positive")
    report = asyncio.run(main_async(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print_report(report)
    print(f"\n  written: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
