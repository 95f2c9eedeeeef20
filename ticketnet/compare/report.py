"""The comparison of two routers, or of two scans, as the lines the command line prints."""

from __future__ import annotations

from ticketnet.compare.summary import p_text


def _iv(iv: dict, signed: bool = False) -> str:
    if iv["value"] is None:
        return "–"
    f = "{:+.4f}" if signed else "{:.4f}"
    if iv["low"] is None:
        return f.format(iv["value"])
    return f"{f.format(iv['value'])} ({f.format(iv['low'])} to {f.format(iv['high'])})"


def _short(iv: dict) -> str:
    if iv["value"] is None:
        return "–"
    return f"{iv['value']:.3f}" + ("" if iv["low"] is None else f" ({iv['low']:.3f}–{iv['high']:.3f})")


def _flip_rows(counts: dict, width: int) -> list[str]:
    return [f"  {label:<{width}}  fixed {c['fixed']:>4}  broken {c['broken']:>4}  both wrong {c['both_wrong']:>4}"
            for label, c in counts.items() if c["fixed"] or c["broken"] or c["both_wrong"]]


def compare_lines(result: dict) -> list[str]:
    """`compare_routers`' (or `compare_tables`') result as readable lines: metrics with intervals, the difference,
    McNemar, agreement, flips by team / style / pattern and the teams outside the shared set."""
    inputs = result.get("inputs", {})
    ra, rb, d = result["routers"]["a"], result["routers"]["b"], result["difference"]
    lines = []
    if inputs:
        lines += [f"A: {inputs['a']}", f"B: {inputs['b']}", f"on {inputs['csv']}"]
    lines.append(f"{result['n']:,} tickets; paired bootstrap 95 % intervals from {result['resamples']:,} resamples "
                 f"(seed {result['seed']})")
    col = 28
    lines.append(f"{'':<10}{'A':<{col}}{'B':<{col}}B − A")
    for key, label in (("accuracy", "accuracy"), ("macro_f1", "macro F1"), ("ece", "ECE")):
        lines.append(f"{label:<10}{_iv(ra[key]):<{col}}{_iv(rb[key]):<{col}}{_iv(d[key], signed=True)}")
    mc = result["mcnemar"]
    lines.append(f"McNemar's exact test: A right and B wrong on {mc['a_right_b_wrong']:,}, B right and A wrong on "
                 f"{mc['b_right_a_wrong']:,}, {p_text(mc.get('p_unrounded', mc['p']))}")
    ag = result["agreement"]
    shift = ag["confidence_shift"]
    line = f"agreement: the same team for {ag['same_team']:.1%} of the tickets, Cohen's κ {ag['kappa']:.4f}"
    if shift["n"]:
        line += (f"; on those {shift['n']:,} B's confidence moved by {shift['mean']:+.4f} on average "
                 f"({shift['low']:+.4f} to {shift['high']:+.4f}), median {shift['median']:+.4f}")
    lines.append(line)
    teams = list(ra["per_team"])
    width = max(len(t) for t in teams + ["team"])
    c = 22
    lines.append(f"  {'team':<{width}}  {'precision A':<{c}}{'precision B':<{c}}{'recall A':<{c}}{'recall B':<{c}}n")
    for t in teams:
        pa, pb = ra["per_team"][t], rb["per_team"][t]
        lines.append(f"  {t:<{width}}  {_short(pa['precision']):<{c}}{_short(pb['precision']):<{c}}"
                     f"{_short(pa['recall']):<{c}}{_short(pb['recall']):<{c}}{pa['support']:,}")
    fl = result["flips"]
    lines.append(f"flips: {fl['fixed']:,} fixed (A wrong, B right), {fl['broken']:,} broken (A right, B wrong), "
                 f"{fl['both_wrong']:,} both wrong with different teams")
    for key, label in (("by_team", "by true team"), ("by_style", "by style"), ("by_pattern", "by pattern")):
        if key in fl:
            rows = _flip_rows(fl[key], max(len(str(k)) for k in fl[key]) if fl[key] else 4)
            if rows:
                lines.append(f" {label}:")
                lines += rows
    tm = result["teams"]
    if tm["only_a"] or tm["only_b"] or tm["tickets_outside_shared"]:
        lines.append(f"outside the {len(tm['shared'])} shared teams: only A knows {', '.join(tm['only_a']) or 'none'}; "
                     f"only B knows {', '.join(tm['only_b']) or 'none'}; {tm['tickets_outside_shared']:,} tickets "
                     f"of those teams left out")
    else:
        lines.append(f"both routers know the same {len(tm['shared'])} teams")
    lines.append(result["verdict"])
    return lines


def _clip(text: str, width: int = 70) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def scans_lines(result: dict) -> list[str]:
    """`compare_scans`' result as readable lines: changed tickets, routing mix per team, words whose effect moved."""
    n, ch = result["tickets"], result["changed"]
    lines = [f"A: {result['a']['scan']} (router {result['a']['router']})",
             f"B: {result['b']['scan']} (router {result['b']['router']})",
             f"the same input, {result['input']['path']}: {n:,} tickets"]
    line = f"{ch['count']:,} tickets ({ch['share']:.2%}) change team"
    if ch["labelled"]:
        line += (f"; of the {ch['labelled']:,} labelled ones B fixes {ch['fixed']:,}, breaks {ch['broken']:,}, "
                 f"and {ch['both_wrong']:,} go from one wrong team to another")
    lines.append(line)
    if result["accuracy"]:
        acc = result["accuracy"]
        lines.append(f"accuracy on the {acc['labelled']:,} labelled tickets: A {acc['a']:.4f}, B {acc['b']:.4f} "
                     f"({acc['b'] - acc['a']:+.4f})")
    for flow in ch["flows"][:10]:
        lines.append(f"  {flow['from']} → {flow['to']}: {flow['tickets']:,}")
    if ch["sample"]:
        lines.append("for example:")
        for s in ch["sample"]:
            label = f" (labelled {s['label']})" if s["label"] else ""
            lines.append(f"  {s['ticket_id']}: {s['predicted_a']} {s['confidence_a']:.2f} → {s['predicted_b']} "
                         f"{s['confidence_b']:.2f}{label}  {_clip(s['text'])!r}")
    width = max(len(t) for t in [*result["routing"], "team"])
    lines.append(f"  {'team':<{width}}  {'A':>10}  {'B':>10}  {'B − A':>10}")
    for team, r in result["routing"].items():
        lines.append(f"  {team:<{width}}  {r['a']:>10,}  {r['b']:>10,}  {r['delta']:>+10,}  "
                     f"({r['share_a']:.1%} → {r['share_b']:.1%})")
    if result["words"] is None:
        lines.append("no deletion effects to compare (a route-level scan)")
    else:
        lines.append(f"words whose mean deletion effect on the team moved most (B − A; seen in at least "
                     f"{result['min_word_tickets']} tickets routed to the team in both scans):")
        if not result["words"]:
            lines.append("  none: every word's mean effect is the same in both scans")
        for team, words in result["words"].items():
            lines.append(f"  {team}: " + ", ".join(f"{w['token']!r} {w['effect_a']:+.3f} → {w['effect_b']:+.3f}"
                                                    for w in words))
    lines.append(f"({result['seconds']:.2f} s)")
    return lines
