"""The load run's output: its JSON report written atomically, and its figures printed."""

from __future__ import annotations

import json
from pathlib import Path

from ticketnet._runtime.atomic import write_atomic


def write_report(path: Path, report: dict) -> None:
    write_atomic(path, (json.dumps(report, indent=1) + "\n").encode("utf-8"))


def _s(v: float | None) -> str:
    return "   -  " if v is None else f"{v:6.3f}"


def print_step(r: dict) -> None:
    srv = r.get("server", {})
    print(f"\n{r['sessions']} analysts × {r['seconds']:.0f} s, one action per {r['action_interval_s']:.0f} s each: "
          f"{r['actions']} actions, {r['errors']} errors {r['errors_by_kind'] or ''}; load average "
          f"{r['load_average_before'][0]:.2f} before, {r['load_average_after'][0]:.2f} after on {r['cores']} cores "
          f"(machine {r['machine_busy_fraction']:.0%} busy)")
    if srv:
        print(f"  server: {srv['cpu_s']:.1f} CPU s = {srv['cpu_s_per_s']:.2f} CPU s per s; memory "
              f"{srv['rss_mb_before']:.0f} MB before, {srv['rss_mb_peak_sampled']:.0f} MB peak, "
              f"{srv['rss_mb_end']:.0f} MB at the end"
              + (f"; {srv['rss_mb_per_min_under_load']:+.2f} MB per min under load"
                 if "rss_mb_per_min_under_load" in srv else "")
              + (f"; {srv['linger_s']:.0f} s after the analysts left: {srv['rss_after_linger_vs_before']:.2f}× "
                 "the memory before" if srv.get("rss_after_linger_vs_before") else ""))
    for trend in srv.get("rss_trends", []):
        print(f"  memory from minute {trend['from_min']:g} to {trend['to_min']:g}: {trend['mb_per_min']:+.2f} MB per "
              f"min (95 % interval {trend['ci95'][0]:+.2f} to {trend['ci95'][1]:+.2f}), {trend['mean_mb']:.0f} MB "
              "on average")
    print(f"  {'':32} {'n':>5} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
    rows = [("all actions", r["action_s"])] + [(f"page {p}", v) for p, v in r["by_page"].items()] + \
        [(f"  {a}", v) for a, v in r["by_action"].items()]
    for name, v in rows:
        print(f"  {name:32} {v['n']:>5} {_s(v['p50'])} {_s(v['p95'])} {_s(v['max'])}")
    split = r.get("split_run")
    if split and "during_split_run" in split:
        print(f"  a split-wide interpretation from {split['at_s']:.0f} s, {split['seconds']} s long: analysts' p95 "
              + ", ".join(f"{side.split('_')[0]} {_s(v['all']['p95']).strip()} s (n {v['all']['n']})"
                          for side, v in split.items() if side.endswith("split_run")))
    rows = r.get("server", {}).get("census", {}).get("under_load") or []
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        print(f"  memory by process, {first['t_s']:.0f} s → {last['t_s']:.0f} s: " + ", ".join(
            f"{k} ×{last['processes'][k]} {first['rss_mb'].get(k, 0):.0f} → {v:.0f} MB"
            for k, v in last["rss_mb"].items()))
        if "heap_in_use_mb" in first and "heap_in_use_mb" in last:
            print(f"  the servers' live heap {first['heap_in_use_mb']:.0f} → {last['heap_in_use_mb']:.0f} MB, their "
                  f"allocator holding {first['heap_held_mb']:.0f} → {last['heap_held_mb']:.0f} MB, Python's blocks "
                  f"{first['heap_python_blocks'] / 1e6:.2f} → {last['heap_python_blocks'] / 1e6:.2f} M")
        grown = sorted(last["cache_mb"].items(), key=lambda kv: -kv[1])[:4]
        print("  largest st.cache_data caches then: " + ", ".join(f"{k.rsplit('.', 1)[-1]} {v:.1f} MB"
                                                                 for k, v in grown))
    print(f"  p95 ≤ target on every page, no error: {'yes' if r['meets_target'] else 'no'}")
    for s in r["error_samples"][:10]:
        print("  !", s)


def print_cost(c: dict) -> None:
    print(f"\nServer cost per action, one session alone, {c['loops']} loops (load average "
          f"{c['load_average_before'][0]:.2f} before, {c['load_average_after'][0]:.2f} after; CPU counted in "
          f"{c['clock_tick_s'] * 1e3:.0f} ms ticks)")
    print(f"  {'action':22} {'page':15} {'n':>3} {'wall s':>7} {'CPU s':>7} {'CPU mean':>8}")
    for name, v in c["per_action"].items():
        print(f"  {name:22} {v['page']:15} {v['n']:>3} {v['wall_s_median']:7.3f} {v['cpu_s_median']:7.3f} "
              f"{v['cpu_s_mean']:8.3f}")
    print(f"  median action: {c['median_action_wall_s']:.3f} s wall, {c['median_action_cpu_s']:.3f} s CPU")
