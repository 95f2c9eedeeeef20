"""Compare routers: two routers on one split, what B fixed and what it broke, and whether the difference is real."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from dashboard import narrative, render, ui, view, views
from dashboard.charts import attention as charts
from dashboard.charts import compare as cc
from dashboard.data import compare, model
from dashboard.text import md_escape
from ticketnet.compare import head_changes, p_text

KINDS = ("fixed", "broken", "both wrong")
EVERY_TEAM = "every team"
FLIP_COLUMNS = ["ticket_id", "kind", "team", "predicted_a", "confidence_a", "predicted_b", "confidence_b", "pattern",
                "style", "text"]
METRIC_PX = 200                      # two metrics a line in a laptop's 540 px column, four at 1366 px

st.title("Compare routers")
st.caption("Router A is the reference (the router in use), B the candidate (a retrain). Every difference is B − A, "
           "with a paired bootstrap 95 % interval over the split's tickets; “fixed” and “broken” are B's doing.")

available = compare.names()
if len(available) < 2:
    st.info("Only one router is available here, so there is nothing to compare it with. Train a second one with "
            "`.venv/bin/python -m ticketnet train --out routers/NAME` (add `--data export.csv` for your own tickets); every "
            "folder under routers/ that holds a router.json is listed here.", icon=":material/info:")
    view.end_page()


default_a, default_b = compare.default_pair(available, model.router_name())
routers_view = views.compare_routers(available, default_a, default_b)
ui.link_refusals(routers_view.restore())
pick_a, pick_b, pick_split = st.columns([2, 2, 1], vertical_alignment="bottom")
a = pick_a.selectbox("Router A (reference)", available, format_func=compare.label, key="cmp_a",
                     index=view.start_index("cmp_a", available),
                     help="By default the router the sidebar reads.")
b = pick_b.selectbox("Router B (candidate)", available, format_func=compare.label, key="cmp_b",
                     index=view.start_index("cmp_b", available),
                     help="By default the next router that routes to the same teams as A.")
routers_view.remember()

if a == b:
    st.info(f"Router A and router B are both {md_escape(a)}: pick another router as B.", icon=":material/info:")
    view.end_page()
for name in (a, b):
    if compare.card(name) is None:
        st.warning(f"Router {md_escape(name)} cannot be read (its router.pt, vocab.json or router.json is missing or "
                   "broken); pick another one, or retrain it.", icon=":material/warning:")
        view.end_page()

shared_splits = compare.shared_splits(a, b)
if not shared_splits:
    st.info(f"{md_escape(a)} and {md_escape(b)} share no split: their data folders hold different tickets. Compare "
            "routers trained on the same data, or compare these two on a labelled CSV with `.venv/bin/python -m ticketnet "
            "compare A B --split file.csv`.", icon=":material/info:")
    view.end_page()
split_view = views.compare_split(shared_splits)
ui.link_refusals(split_view.restore())
split = pick_split.selectbox("Split", shared_splits, key="cmp_split", index=view.start_index("cmp_split", shared_splits))
split_view.remember()

summary = compare.summary(a, b, split)
if isinstance(summary, str):
    st.info(f"{md_escape(a)} and {md_escape(b)} cannot be compared on the {split} split: {md_escape(summary)}.",
            icon=":material/info:")
    view.end_page()
label_a, label_b = cc.labels_of(a, b)


# -- the summary --------------------------------------------------------------------------------------------------------
def _interval(iv: dict, signed: bool = False) -> str | None:
    if iv.get("low") is None:
        return None
    f = (lambda x: f"{x:+.3f}") if signed else (lambda x: f"{x:.3f}")
    return f"95 %: {f(iv['low'])} to {f(iv['high'])}"


def _metric(box, label: str, iv: dict, signed: bool = False, help: str | None = None) -> None:
    value = iv.get("value")
    shown = "n/a" if value is None else (f"{value:+.3f}" if signed else f"{value:.3f}")
    box.metric(label, shown, delta=_interval(iv, signed), delta_color="off", delta_arrow="off", help=help,
               width=METRIC_PX, border=True)


routers, diff, mc, agree = summary["routers"], summary["difference"], summary["mcnemar"], summary["agreement"]
st.info(md_escape(summary["verdict"]), icon=":material/balance:")
row = st.container(horizontal=True, gap="small")
_metric(row, f"accuracy, {label_a}", routers["a"]["accuracy"])
_metric(row, f"accuracy, {label_b}", routers["b"]["accuracy"])
_metric(row, "accuracy, B − A", diff["accuracy"], signed=True)
row.metric("McNemar's exact test", p_text(mc["p_unrounded"]),      # as the verdict above writes it
           delta=f"B fixed {mc['b_right_a_wrong']}, broke {mc['a_right_b_wrong']}", delta_color="off",
           delta_arrow="off", width=METRIC_PX, border=True,
           help="On the tickets exactly one router routes right (the discordant pairs).")
row = st.container(horizontal=True, gap="small")
_metric(row, f"macro F1, {label_a}", routers["a"]["macro_f1"])
_metric(row, f"macro F1, {label_b}", routers["b"]["macro_f1"])
_metric(row, "macro F1, B − A", diff["macro_f1"], signed=True)
kappa = "n/a" if agree["kappa"] is None else f"{agree['kappa']:.3f}"      # undefined when one router names one team
row.metric("same team from both", f"{agree['same_team']:.1%}", delta=f"Cohen's κ {kappa}",
           delta_color="off", delta_arrow="off", width=METRIC_PX, border=True)
row = st.container(horizontal=True, gap="small")
ECE_HELP = "Expected calibration error (15 bins): how far confidence is from accuracy; lower is better."
_metric(row, f"ECE, {label_a}", routers["a"]["ece"], help=ECE_HELP)
_metric(row, f"ECE, {label_b}", routers["b"]["ece"], help=ECE_HELP)
if "ece" in diff:
    _metric(row, "ECE, B − A", diff["ece"], signed=True, help=ECE_HELP)
shift = agree["confidence_shift"]
if shift["n"]:
    _metric(row, "confidence shift, B − A", {"value": shift["mean"], "low": shift["low"], "high": shift["high"]},
            signed=True, help=f"Mean change of confidence on the {shift['n']:,} tickets both route to the same team.")
teams = summary["teams"]
st.caption(md_escape(
    f"{narrative.count(summary['n'], 'ticket')} of the {split} split, {summary['resamples']:,} paired bootstrap "
    f"resamples (seed {summary['seed']}). "
    + (f"Compared on the {len(teams['shared'])} teams both routers know; only A knows "
       f"{', '.join(teams['only_a']) or 'none'}, only B {', '.join(teams['only_b']) or 'none'}; "
       f"{teams['tickets_outside_shared']:,} tickets of other teams are left out."
       if teams["only_a"] or teams["only_b"] else f"Both routers know the same {len(teams['shared'])} teams.")))

st.subheader("Per team: B − A precision and recall")
st.caption("A dot at the difference, a line across its paired 95 % interval: green where B is higher beyond doubt, "
           "red where it is lower, grey where the interval crosses 0.")
render.chart(cc.team_deltas_chart, compare.team_deltas(a, b, split))

# -- the flips --------------------------------------------------------------------------------------------------------------
st.header("Flips", divider="gray")
flips = compare.flips(a, b, split)
counts = summary["flips"]
st.caption(narrative.flips_sentence(counts["fixed"], counts["broken"], counts["both_wrong"])
           + " Pick a row to see the ticket side by side.")

ticket_view = views.compare_ticket(teams["shared"], KINDS, EVERY_TEAM)
ui.link_refusals(ticket_view.restore())
f_kind, f_team = st.columns([3, 2], vertical_alignment="bottom")
kinds = f_kind.segmented_control("Kind", KINDS, selection_mode="multi", key="cmp_kinds",
                                 default=view.start("cmp_kinds")) or []
team_filter = f_team.selectbox("True team", [EVERY_TEAM, *teams["shared"]], key="cmp_team",
                               index=view.start_index("cmp_team", [EVERY_TEAM, *teams["shared"]]))
shown = flips[flips["kind"].isin(kinds)]
if team_filter != EVERY_TEAM:
    shown = shown[shown["team"] == team_filter]
shown = shown[[c for c in FLIP_COLUMNS if c in shown.columns]].reset_index(drop=True)
picked = st.session_state.get("cmp_ticket")
if len(shown):
    table_key = f"cmp_flips_{'_'.join(sorted(kinds))}_{team_filter}"
    at_row = shown.index[shown["ticket_id"] == picked].tolist()
    event = st.dataframe(shown, hide_index=True, key=table_key, on_select="rerun", selection_mode="single-row",
                         selection_default={"selection": {"rows": at_row[:1]}} if at_row else None, height=280,
                         column_config={
                             "predicted_a": st.column_config.TextColumn(f"{label_a} predicted"),
                             "confidence_a": st.column_config.NumberColumn("A confidence", format="%.3f"),
                             "predicted_b": st.column_config.TextColumn(f"{label_b} predicted"),
                             "confidence_b": st.column_config.NumberColumn("B confidence", format="%.3f"),
                             "team": st.column_config.TextColumn("true team")})
    rows = ui.selection(event, "rows")
    if rows and view.selection_changed(table_key, tuple(rows), False) and rows[0] < len(shown):
        picked = st.session_state["cmp_ticket"] = shown.iloc[rows[0]]["ticket_id"]
elif len(flips):
    st.caption("No flip of this kind and team.")
else:
    st.caption(f"The two routers route every ticket of the {split} split alike: no flips.")

ticket = compare.split_ticket(a, b, split, picked) if picked else None
if picked and ticket is None:                  # from a link, or picked on another split or pair of routers
    st.session_state["cmp_ticket"] = None
    st.warning(f"Ticket {md_escape(picked)} is not in the {split} split of these routers: no ticket is shown side by "
               "side.", icon=":material/link_off:")
ticket_view.remember()

# -- one ticket side by side ----------------------------------------------------------------------------------------------
if ticket is not None:
    tid = ticket["ticket_id"]
    st.header(f"{md_escape(tid)} side by side", divider="gray")
    kind = next(iter(flips.loc[flips["ticket_id"] == tid, "kind"]), None)
    st.markdown(f"True team **{md_escape(ticket['team'])}**" + (f" · {kind}" if kind else " · no flip")
                + (f" · pattern *{md_escape(ticket['pattern'])}*" if ticket.get("pattern") else ""))
    ui.thread_view(ticket["text"], elsewhere="Its Heads and Interpretation pages (below) can read the quoted part too.")
    sides = st.container(horizontal=True, gap="medium")
    for key, name, label in (("a", a, label_a), ("b", b, label_b)):
        side = sides.container(width=250)
        predicted = ticket[f"predicted_{key}"]
        verdict = "right" if predicted == ticket["team"] else "wrong"
        side.metric(f"{label}: prediction", predicted, delta=f"confidence {ticket[f'confidence_{key}']:.3f} · {verdict}",
                    delta_color="off", delta_arrow="off", border=True)
        links = side.container(horizontal=True, gap="small")
        query = urlencode({"router": name, "ticket": tid})
        links.link_button("Heads", f"heads?{query}", icon=":material/grid_on:", help=f"The Heads page of {name} on "
                          "this ticket, in a new tab.")
        links.link_button("Interpretation", f"interpretation?{query}", icon=":material/troubleshoot:",
                          help=f"The Interpretation page of {name} on this ticket, in a new tab.")

    if compare.is_encoder(a) or compare.is_encoder(b):
        # The side-by-side heatmaps and deletions pair the routers token by token; an encoder reads pieces.
        st.info("One of these routers is a pretrained encoder, which reads the ticket as pieces: its heads and its "
                "word removals are not paired token by token with another router's here. Open each router's Heads "
                "and Interpretation pages with the buttons above.", icon=":material/info:")
if ticket is not None and not (compare.is_encoder(a) or compare.is_encoder(b)):
    try:
        ins_a, ins_b = compare.inspection(a, ticket["text"]), compare.inspection(b, ticket["text"])
    except ValueError as exc:
        ui.cannot_route(exc)
    n = min(len(ins_a.tokens), len(ins_b.tokens))
    tokens = ins_a.tokens[:n]
    blocks = list(range(1, min(ins_a.patterns.shape[0], ins_b.patterns.shape[0]) + 1))
    heads = list(range(1, min(ins_a.patterns.shape[1], ins_b.patterns.shape[1]) + 1))
    st.subheader("Attention of both routers, one head, one query row")
    first_row = ui.default_query_row(tokens)
    labels = ui.token_choice_labels(tokens)
    heads_view = views.compare_heads(tid, len(blocks), len(heads), n, first_row)
    ui.link_refusals(heads_view.restore())
    s_block, s_head, s_row = st.columns([1, 2, 2], vertical_alignment="bottom")
    with s_block:
        block = st.segmented_control("Block", blocks, key="cmp_block", required=True,
                                     default=view.start("cmp_block")) or 1
    with s_head:
        head = st.segmented_control("Head", heads, key="cmp_head", required=True, default=view.start("cmp_head")) or 1
    with s_row:
        query_row = st.selectbox("Query row (the reading token)", range(n), format_func=labels.__getitem__,
                                 key=f"cmp_row_{tid}", index=view.start_index(f"cmp_row_{tid}", range(n)))
    if ins_a.patterns.shape[:2] != ins_b.patterns.shape[:2]:
        st.caption("The routers have different shapes: the same block and head number name different heads here.")
    pair = st.container(horizontal=True, gap="medium")
    for label, ins in ((label_a, ins_a), (label_b, ins_b)):
        with pair.container(width="content"):
            render.chart(charts.head_heatmap, ins.patterns[block - 1][head - 1], ins.tokens, head, query_row, block=block,
                     title=f"{label} · block {block} · head {head}")

    st.subheader("Deletion effects of both routers")
    unit = st.segmented_control("Effect unit", tuple(narrative.UNIT_NAMES), key="cmp_unit", required=True,
                                default=view.start("cmp_unit"),
                                format_func=narrative.UNIT_NAMES.__getitem__) or views.UNIT_DEFAULT
    try:
        deletion = compare.deletion(a, b, ticket["text"], unit)
    except ValueError as exc:
        st.caption(md_escape(f"No deletion effects for this ticket: {exc}."))
    else:
        unit_name = narrative.UNIT_NAMES[unit]
        st.caption(md_escape(
            f"Each token deleted in turn: its support for the router's own predicted team ({label_a}: "
            f"{deletion.team_a}, {label_b}: {deletion.team_b}) is the score with the token minus the score without "
            f"it, in {unit_name}; positive where the token helps that team."))
        own_scale = st.toggle("Each router on its own scale", key="cmp_own_scale", value=bool(view.start("cmp_own_scale")),
                              help="Divide each router's effects by its largest one (in size), so a router whose "
                                   "deletions move little is not drawn flat beside one whose deletions move much. "
                                   "The ranking, and so Kendall τ, stays the same.")
        x_title = (f"share of its largest effect ({unit_name})" if own_scale
                   else f"support for its predicted team ({unit_name})")
        render.chart(cc.deletion_chart, deletion.frame(), label_a, label_b, x_title, own_scale=own_scale)
        tau_box = st.container(horizontal=True, gap="medium", vertical_alignment="center")
        tau_box.metric("Kendall τ of the deletions", narrative.tau_text(deletion.tau), border=True, width=METRIC_PX + 40,
                       help="Rank agreement between A's and B's deletion effects over the ticket's tokens.")
        if deletion.tau == deletion.tau:                       # not nan
            reading = ("the two routers rank the ticket's tokens much alike: B mostly shifts its confidence"
                       if deletion.tau >= 0.6 else
                       "the routers rank the tokens partly alike" if deletion.tau >= 0.3 else
                       "B reads this ticket differently: the tokens that matter to one matter little to the other")
            tau_box.markdown(md_escape(f"τ = {narrative.tau_text(deletion.tau)} over {len(deletion.tokens)} tokens: "
                                       f"{reading}."), width="content")
        else:
            tau_box.caption("τ is undefined: one router's deletions all move its score by the same amount.")
    heads_view.remember()

# -- per head across the split --------------------------------------------------------------------------------------------
st.header("Per head, across the split", divider="gray")
problem = compare.shape_problem(a, b)
if problem:
    st.caption(md_escape(problem[0].upper() + problem[1:] + "."))
else:
    st.caption(f"How much each head's attention changed from A to B: for every ticket of the {split} split and every "
               "query row, the Jensen–Shannon divergence (nats, 0 to ln 2 ≈ 0.693) between the two routers' rows, "
               "averaged over the ticket's rows, then over the tickets. Beside it, what switching the head off costs "
               "each router in accuracy on the same split.")
    divergence = compare.stored_divergence(a, b, split)
    if divergence is None:
        if st.button("Compute the per-head divergence", icon=":material/calculate:", key="cmp_divergence",
                     help=f"Both routers read all {summary['n']:,} tickets once, in batches: seconds."):
            with st.spinner("Reading every ticket with both routers…"):
                compare.compute_divergence(a, b, split)
            st.rerun()
    else:
        imp_a, imp_b = compare.importance(a, split), compare.importance(b, split)
        render.chart(cc.head_change_chart, head_changes(divergence, imp_a, imp_b), label_a, label_b)
        top = divergence.nlargest(1, "jsd").iloc[0]
        st.caption(f"Most changed: block {int(top['block'])}, head {int(top['head'])} (mean JSD "
                   f"{narrative.fmt(top['jsd'], 3)}). A head that changed much but matters little in both routers is "
                   "a change the routing does not depend on.")
        missing = [(name, label) for name, label, imp in ((a, label_a, imp_a), (b, label_b, imp_b)) if imp is None]
        if missing and st.button("Compute head importance of " + " and ".join(label for _, label in missing),
                                 icon=":material/calculate:", key="cmp_importance",
                                 help="Each head switched off in turn over the split (as on the Heads page): about "
                                      f"{max(1, round(summary['n'] / 115))} s per router on two cores. Kept on disk."):
            bar = st.progress(0.0, text="Masking each head in turn…")
            for i, (name, label) in enumerate(missing):
                def progress(done: int, total: int, i: int = i, label: str = label) -> None:
                    bar.progress((i + done / max(total, 1)) / len(missing),
                                 text=f"Masking each head of {label}: {done} of {total} tickets")
                compare.compute_importance(name, split, progress)
            bar.empty()
            st.rerun()
