"""Corpus: a whole ticket stream scanned on Dask; what the router relies on per team, and every ticket to pick from."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from dashboard import render, state, ui, view, views
from dashboard.charts import corpus as corpus_charts
from dashboard.data import corpus as corpus_data
from dashboard.data import model
from dashboard.text import md_escape
from ticketnet import DataError
from ticketnet.interpret import DISAGREEMENT, ROLLOUT, TAU

FOLDER_KEY = views.CORPUS_FOLDER_KEY
SCAN_LEVEL_KEY = "corpus_scan_level"
TABLE_KEY = "corpus_table"
PICK_KEY = "corpus_pick_id"
CONFUSION_KEY = "corpus_confusion"
CONFUSION_RESET = "_corpus_confusion_reset"       # bumped to draw the matrix afresh, its selection cleared
CELL_KEYS = {"true": views.CORPUS_CELL_TRUE, "predicted": views.CORPUS_CELL_PRED}
# Widths of the ticket filters: each label and value whole on one line ("Predicted team", "any", "input order");
# the row wraps where the window is narrow.
FILTER_WIDTHS = (150, 150, 150, 140, 170, 230, 230, 230)

st.title("Corpus")
st.caption("A whole ticket stream, interpreted ticket by ticket on a Dask cluster (`.venv/bin/python -m ticketnet scan`): where "
           "the router's attention goes across thousands of tickets, what deleting each word does, and which tickets "
           "to look at. Opening a scan reads only its aggregates; the ticket list is queried on disk as you filter.")


def scan_with_progress(inputs, out: Path, what: str, level: str) -> bool:
    bar = st.progress(0.0, text=f"Scanning {what}…")
    try:
        corpus_data.run_scan(inputs, out, lambda f, words: bar.progress(min(1.0, f), text=words), level=level)
    except (DataError, ValueError, OSError) as exc:
        bar.empty()
        st.error(f"**The scan could not run.** {md_escape(exc)}", icon=":material/error:")
        return False
    bar.empty()
    return True


# -- which scan ------------------------------------------------------------------------------------------------
scans = corpus_data.found_scans()
levels = corpus_data.scan_levels()
with st.expander("Scan your own tickets", icon=":material/upload_file:", expanded=not scans):
    scan_level = levels[0]
    if len(levels) > 1:
        # An encoder router removes every word of every ticket, twice, at level effects, far more work than route
        # (docs/corpus.md, "Encoder routers"): route first, effects for those who wait for it.
        scan_level = st.segmented_control(
            "Level of a new scan", levels, key=SCAN_LEVEL_KEY, default=levels[0], required=True, width="content",
            help="route: team, confidence and the card's flags; effects: + every word removed, attention τ and the "
                 "word aggregates. An encoder router has no level full: ERASER is computed for the Tiny router only."
        ) or levels[0]
    st.markdown(f"Upload a CSV (`ticket_id,text`, optionally `team`) or a Parquet file with those columns, up to "
                f"{corpus_data.UPLOAD_LIMIT_MB} MB (about 250,000 tickets of 200 characters). It is checked "
                "like the command line's input, kept outside the repository, and scanned on a local Dask cluster "
                f"(one worker per core) at level *{scan_level}*.")
    upload = st.file_uploader("Tickets file", type=["csv", "parquet"], key="corpus_upload")
    if upload is not None and st.button("Scan this file", icon=":material/play_arrow:", key="scan_upload"):
        saved = corpus_data.save_upload(upload.name, upload.getvalue())
        out = corpus_data.upload_scan_folder(saved)
        if scan_with_progress(saved, out, md_escape(upload.name), scan_level):
            st.session_state[FOLDER_KEY] = str(out)
            st.rerun()

if not scans:
    n_inputs = sum(corpus_data.rows_in(p) for p in corpus_data.shipped_inputs())
    st.info(f"No scan yet. Scan this router's valid and test splits ({n_inputs:,} tickets"
            + (f" at level *{scan_level}*" if len(levels) > 1 else "")
            + f", about {corpus_data.seconds_for(n_inputs, scan_level):,} s on two cores"
            + ("; the same as `make corpus-demo`" if model.router_name() == model.DEFAULT_ROUTER else "")
            + "), or upload your own tickets above.", icon=":material/info:")
    if st.button("Scan the valid and test splits", icon=":material/play_arrow:", type="primary",
                 key="scan_shipped"):
        if scan_with_progress(corpus_data.shipped_inputs(), corpus_data.shipped_folder(), "valid and test",
                              scan_level):
            st.rerun()
    view.end_page()

names = [str(p) for p in scans]
scan_view = views.corpus_scan(names)
ui.link_refusals(scan_view.restore())            # the scan a link names, or the session's
folder = Path(st.selectbox("Scan", names, key=FOLDER_KEY, format_func=os.path.basename,
                           index=view.start_index(FOLDER_KEY, names),
                           help=f"Finished scans under {corpus_data.scans_root()} (set TICKETNET_SCANS to look "
                                "elsewhere); `.venv/bin/python -m ticketnet scan INPUT --out FOLDER` makes one."))
scan_view.remember()
try:
    scan = corpus_data.open_scan(folder)
except ValueError as exc:
    st.error(md_escape(exc), icon=":material/error:")
    view.end_page()
summary = scan.summary
teams = list(summary["teams"])
labelled = summary["accuracy"] is not None
by_word = corpus_data.is_encoder_scan(scan)     # an encoder router's scan: words removed, the card's flags
LEVEL_HAS = ({"route": "team, confidence and the card's flags (an encoder router's scan)",
              "effects": "team, confidence, the card's flags, every word removed, attention τ and the word "
                         "aggregates (an encoder router's scan: no ERASER)"} if by_word else
             {"route": "team and confidence only", "effects": "team, confidence, deletion effects, attention τ and "
              "the token aggregates (no ERASER)", "full": "everything: deletion effects, attention τ, token "
              "aggregates and ERASER"})
UNIT = "word" if by_word else "token"
st.caption(f"{summary['tickets']:,} tickets · level **{scan.level}**: {LEVEL_HAS[scan.level]} · weights "
           f"`{scan.manifest['weights']['sha256'][:12]}` · input `{scan.manifest['input']['sha256'][:12]}`")

# -- summary ---------------------------------------------------------------------------------------------------
# Pieces of fixed width in rows that wrap, as on the Tickets page: side by side where the window has room, one
# under the other at 1000 px (st.columns squeezed the matrix, the scatter and the filters to unreadable widths).
st.header("Summary", divider="gray")
sorts = [s for s in corpus_data.SORTS if scan.level != "route" or "disagrees" not in s]
corpus_view = views.corpus(teams, sorts)
ui.link_refusals(corpus_view.restore())          # the choices below: from a link, else kept for the session
metrics = st.container(horizontal=True, gap="medium")
metrics.metric("tickets", f"{summary['tickets']:,}", width="content")
metrics.metric("accuracy", f"{summary['accuracy']:.3f}" if labelled else "no labels", width="content",
               help=f"on the {summary['labelled']:,} tickets with a team" if labelled else "the input had no team "
                                                                                            "column")
metrics.metric("truncated", f"{summary['truncated']:,}", width="content",
               help="longer than the router reads (" + ("its maximum of pieces" if by_word else "256 tokens") + ")")
flags = summary.get("flags") or {}
if "low_confidence" in flags:
    metrics.metric("below the confidence threshold", f"{flags['low_confidence']:,}", width="content",
                   help="the router's card would not route these on its own: their confidence is under the threshold "
                        "of its rule (the stored policy's, else the calibrated minimum)")
if "unfamiliar" in flags:
    metrics.metric("unlike the training tickets", f"{flags['unfamiliar']:,}", width="content",
                   help="farther from every team's training tickets, in the space the classifier reads, than 99 % of "
                        "the validation tickets")
if summary.get(TAU, {}).get(ROLLOUT.name, {}).get("mean") is not None:
    metrics.metric("mean τ, rollout vs effect", f"{summary[TAU][ROLLOUT.name]['mean']:.3f}", width="content",
                   help=f"Kendall τ between attention rollout and the {UNIT}'s deletion effect, averaged over tickets")
overview = st.container(horizontal=True, gap="large")
with overview.container(width=corpus_charts.SUMMARY_PX):
    st.subheader("Routing mix")
    render.chart(corpus_charts.routing_chart, summary, width="stretch")
    st.subheader("Confidence")
    render.chart(corpus_charts.confidence_chart, summary, width="stretch")
cell = None
if labelled:
    from dashboard.charts import quality
    with overview.container(width="content"):
        st.subheader("Confusion matrix")
        confusion_key = f"{CONFUSION_KEY}_{st.session_state.get(CONFUSION_RESET, 0)}"
        fresh = confusion_key not in st.session_state            # drawn afresh: after another page, or a link
        event = st.altair_chart(quality.confusion_chart(summary["confusion"], teams), key=confusion_key,
                                on_select="rerun", selection_mode=quality.CONFUSION_PARAM, width="content")
    ui.chart_cell(confusion_key, event, fresh, CELL_KEYS)
    kept_cell = {part: st.session_state.get(key) for part, key in CELL_KEYS.items()}
    cell = kept_cell if all(kept_cell.values()) else None

# -- the stored routing policy (scans of a router with one: the columns auto, team_set, set_size) ---------------
policy = corpus_data.policy_summary(scan)
if policy is not None:
    st.header("Routing policy", divider="gray")
    st.markdown("The router had a stored routing policy (`.venv/bin/python -m ticketnet policy`) when it made this scan: each "
                "ticket is auto-routed when its confidence clears its predicted team's threshold, and the rest go "
                "to a person with their prediction set, the teams that hold the true one with the promised "
                "probability on tickets like the validation split.")
    shown = st.container(horizontal=True, gap="medium")
    shown.metric("automation rate", f"{policy['coverage']:.1%}", width="content",
                 help=f"{policy['auto_routed']:,} of {policy['tickets']:,} tickets skip the person")
    shown.metric("to a person", f"{policy['tickets'] - policy['auto_routed']:,}", width="content")
    if policy["precision"] is not None:
        shown.metric("precision of the auto-routed", f"{policy['precision']:.3f}", width="content",
                     help=f"on the {policy['labelled_auto_routed']:,} auto-routed tickets with a team")
    shown.metric("mean set size", f"{policy['mean_set_size']:.2f}", width="content",
                 help="teams per ticket in its prediction set")
    with st.container(width=corpus_charts.SUMMARY_PX):
        st.subheader("Prediction set sizes")
        render.chart(corpus_charts.set_size_chart, policy, width="stretch")

# -- reliance ---------------------------------------------------------------------------------------------------
st.header("What the router relies on, per team", divider="gray")
if scan.tokens is None:
    st.info("This scan was made at level *route*: it has each ticket's team and confidence, but no deletion effects "
            "or attention. Scan with `--level effects`" + ("" if by_word else " or `full`")
            + " to see what the router relies on.")
else:
    choice = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
    team = choice.segmented_control("Team", teams, key="corpus_team", required=True, default=view.start("corpus_team"),
                                    width="content") or teams[0]
    min_tickets = choice.number_input(f"{UNIT.capitalize()}s seen in at least … tickets", 1, corpus_data.MIN_TICKETS_MAX,
                                      key="corpus_min_tickets", width=230, value=view.start("corpus_min_tickets") or "min")
    reliance = corpus_charts.reliance_frame(scan.tokens, team, int(min_tickets))
    st.markdown(("Each point is a word in tickets routed to this team (as the ticket wrote it, lowercased; removing "
                 "it takes out all its pieces). " if by_word else
                 "Each point is a word (token) in tickets routed to this team. ")
                + "**Right** means attention flows to it "
                "(its mean share of the pooled representation, by rollout); **up** means deleting it lowers the "
                "team's probability. Points on the dashed line get as much attention as their deletion matters. "
                "**Far above the line**: words the router depends on while attention barely shows them; **far below**: "
                "words attention points at that hardly change the routing. Across the corpus, those are where "
                "reading attention as an explanation would mislead.")
    if reliance.empty:
        why = corpus_charts.empty_reliance_reason(scan.tokens, team, int(min_tickets), summary["routing"].get(team, 0))
        st.info(md_escape(why), icon=":material/filter_alt_off:")
    else:
        words = st.container(horizontal=True, gap="small")      # 520 + 16 + 360: side by side at 1366 px
        with words.container(width="content"):
            render.chart(corpus_charts.reliance_chart, reliance, team, width="content")
        with words.container(width=corpus_charts.RELIANCE_TABLE_PX):
            table = reliance[["token", "tickets", "mean_effect", "median_effect", "mean_rollout", "top_effect_share",
                              "effect minus attention"]].sort_values("mean_effect", ascending=False)
            st.dataframe(table, hide_index=True, width="stretch", height=420, column_config={
                "token": st.column_config.TextColumn(UNIT),
                "mean_effect": st.column_config.NumberColumn("mean effect", format="%.4f"),
                "median_effect": st.column_config.NumberColumn("median effect", format="%.3f"),
                "mean_rollout": st.column_config.NumberColumn("mean rollout", format="%.4f"),
                "top_effect_share": st.column_config.NumberColumn("top-effect token in", format="percent"),
                "effect minus attention": st.column_config.NumberColumn(format="%.4f")})
    if summary.get(TAU):
        with st.expander("Attention against deletion effect, every signal (mean Kendall τ)"):
            render.chart(corpus_charts.tau_chart, summary, width="stretch")

# -- compare with another scan of the same input ----------------------------------------------------------
with st.expander("Compare with another scan", icon=":material/compare_arrows:"):
    others = corpus_data.comparable_scans(scan)
    if not others:
        st.info("No other finished scan of this input. Scan the same file with another router "
                "(`.venv/bin/python -m ticketnet scan INPUT --router DIR --out FOLDER`, or pick the router in the sidebar and scan "
                "here) to see which tickets change team; `.venv/bin/python -m ticketnet compare-scans A B` does the same on the "
                "command line.", icon=":material/info:")
    else:
        other_label = st.selectbox("Scan B (this scan is A)", list(others), key="corpus_compare_with")
        try:
            cmp = corpus_data.compare_scans(scan, others[other_label])
        except ValueError as exc:
            st.error(md_escape(exc), icon=":material/error:")
        else:
            ch = cmp["changed"]
            numbers = st.container(horizontal=True, gap="medium")
            numbers.metric("tickets that change team", f"{ch['count']:,}", width="content",
                           help=f"{ch['share']:.2%} of the {cmp['tickets']:,} tickets")
            if ch["labelled"]:
                numbers.metric("fixed by B", f"{ch['fixed']:,}", width="content",
                               help="labelled tickets A routes wrong and B right")
                numbers.metric("broken by B", f"{ch['broken']:,}", width="content",
                               help="labelled tickets A routes right and B wrong")
            if cmp["accuracy"]:
                acc = cmp["accuracy"]
                numbers.metric("accuracy B", f"{acc['b']:.3f}", f"{acc['b'] - acc['a']:+.3f} against A",
                               width="content")
            st.caption(f"Read with DuckDB from both scans' Parquet files in {cmp['seconds']:.2f} s.")
            st.subheader("Routing mix, B − A")
            render.chart(corpus_charts.routing_delta_chart, cmp, width="content")
            changed_rows, word_rows = corpus_data.comparison_frames(cmp)
            if ch["sample"]:
                st.subheader("Tickets that change team")
                st.dataframe(changed_rows, hide_index=True, width="stretch", column_config={
                    "ticket_id": st.column_config.TextColumn("ticket", pinned=True),
                    "text": st.column_config.TextColumn("text", width="large"),
                    "label": st.column_config.TextColumn("true team"),
                    "predicted_a": st.column_config.TextColumn("A routes to"),
                    "confidence_a": st.column_config.NumberColumn("A confidence", format="%.2f"),
                    "predicted_b": st.column_config.TextColumn("B routes to"),
                    "confidence_b": st.column_config.NumberColumn("B confidence", format="%.2f")})
                st.caption(f"The first {len(ch['sample'])} of {ch['count']:,} in input order.")
            if cmp["words"]:
                st.subheader("Words whose deletion effect moved most, per team")
                st.dataframe(word_rows, hide_index=True, width="stretch", column_config={
                    "tickets_a": st.column_config.NumberColumn("tickets A"),
                    "tickets_b": st.column_config.NumberColumn("tickets B"),
                    "effect_a": st.column_config.NumberColumn("mean effect A", format="%.4f"),
                    "effect_b": st.column_config.NumberColumn("mean effect B", format="%.4f"),
                    "delta": st.column_config.NumberColumn("B − A", format="%+.4f")})
                st.caption(f"Mean deletion effect on the team over the tickets each router sends there; words seen in "
                           f"at least {cmp['min_word_tickets']} such tickets in both scans.")
            elif cmp["words"] is None:
                st.caption("One of the scans is at level *route*: no deletion effects to compare.")

# -- tickets ------------------------------------------------------------------------------------------------------
st.header("Tickets", divider="gray")
filter_row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")   # wraps, labels kept whole
f = [filter_row.container(width=w) for w in FILTER_WIDTHS]
token = f[0].text_input("Contains the word", key="corpus_token", placeholder="e.g. refund",
                        value=view.start("corpus_token") or "")
pred = f[1].selectbox("Predicted team", [corpus_data.ANY, *teams], key="corpus_pred",
                      index=view.start_index("corpus_pred", [corpus_data.ANY, *teams]))
true = f[2].selectbox("True team", [corpus_data.ANY, *teams], key="corpus_true", disabled=not labelled,
                      index=view.start_index("corpus_true", [corpus_data.ANY, *teams]))
misrouted = f[3].toggle("Misrouted only", key="corpus_misrouted", disabled=not labelled,
                        value=bool(view.start("corpus_misrouted")))
conf = f[4].slider("Confidence", 0.0, 1.0, step=0.01, key="corpus_conf", value=view.start("corpus_conf"))
disagree = f[5].slider("Attention disagrees with effect", 0.0, 1.0, step=0.01, key="corpus_disagree",
                       value=view.start("corpus_disagree"),
                       disabled=scan.level == "route",
                       help="(1 − Kendall τ between rollout and the deletion effect) / 2: 0 = rollout ranks the words "
                            "exactly as deleting them matters, 0.5 = unrelated, 1 = reversed")
sort = f[6].selectbox("Sort by", sorts, key="corpus_sort", index=view.start_index("corpus_sort", sorts))
has_doubt = labelled and corpus_data.has_label_confidence(scan)
doubt = f[7].slider("Router's p(given team) at most", 0.0, 1.0, step=0.01, key="corpus_doubt",
                    value=view.start("corpus_doubt"),
                    disabled=not has_doubt,
                    help="tickets whose given team the router gives a probability below this (1: every ticket)"
                    + ("" if has_doubt else "; this scan has no labels, or was made before scans carried it"))
corpus_view.remember()                           # the choices above, kept and written to the URL
if cell:                                          # a confusion cell narrows the teams, as on the Tickets page
    pred, true = cell.get("predicted", pred), cell.get("true", true)
    st.caption(f"Confusion cell: true {md_escape(true)} → predicted {md_escape(pred)} (double-click the cell, or "
               "clear it here)")
    if st.button("Clear the confusion filter", icon=":material/filter_alt_off:", key="corpus_clear_cell",
                 width="content"):
        for key in CELL_KEYS.values():
            st.session_state[key] = None
        st.session_state[CONFUSION_RESET] = st.session_state.get(CONFUSION_RESET, 0) + 1
        st.rerun()
filters = corpus_data.Filters(token=token or "", team="" if pred == corpus_data.ANY else pred,
                              label="" if true == corpus_data.ANY else true, misrouted=bool(misrouted),
                              confidence=tuple(conf), disagreement=tuple(disagree), sort=sort,
                              label_confidence_below=float(doubt) if has_doubt else 1.0)
listed, total = corpus_data.tickets(scan, filters)
st.caption(f"{total:,} of {summary['tickets']:,} tickets match" + (f"; the first {len(listed):,} are listed"
                                                                     if total > len(listed) else "")
           + " · click a row to pick that ticket for the Heads and Interpretation pages")

event = st.dataframe(listed, key=f"{TABLE_KEY}_{hash(filters)}", on_select="rerun", selection_mode="single-row",
                     hide_index=True, width="stretch", height=420, column_config={
                         "ticket_id": st.column_config.TextColumn("ticket", pinned=True),
                         "text": st.column_config.TextColumn("text", width="large"),
                         "label": st.column_config.TextColumn("true team"),
                         "label_confidence": st.column_config.NumberColumn("p(true team)", format="%.2f"),
                         "confidence": st.column_config.ProgressColumn("confidence", min_value=0.0, max_value=1.0,
                                                                       format="%.2f"),
                         DISAGREEMENT: st.column_config.NumberColumn("attention disagrees", format="%.2f"),
                         "top_effect_1": st.column_config.TextColumn("top word by effect"),
                         "top_rollout_1": st.column_config.TextColumn("top word by rollout"),
                         "low_confidence": st.column_config.CheckboxColumn(
                             "low confidence", help="below the threshold of the router's rule: not routed on its own"),
                         "unfamiliar": st.column_config.CheckboxColumn(
                             "unlike training", help="farther from the training tickets than 99 % of validation's"),
                         "distance": st.column_config.NumberColumn(
                             "distance", format="%.1f", help="from the nearest team's training tickets, in the "
                                                             "space the classifier reads"),
                         "set_aside_chars": st.column_config.NumberColumn(
                             "set aside", help="characters of quoted history, forwarded chain or signature the "
                                               "router did not read (0: it read the whole ticket)")})
rows = ui.selection(event, "rows")
ids = listed["ticket_id"].tolist()
chosen = ids[rows[0]] if rows and rows[0] < len(ids) else None
by_id = st.selectbox("…or pick by id", ["—", *ids], key=PICK_KEY, help="the tickets listed above")
if chosen is None and by_id != "—":
    chosen = by_id
pick = state.current()
if chosen is not None and chosen != pick.corpus_id:
    row = corpus_data.ticket(scan, chosen)
    if row is not None:
        label = row.get("label")
        state.pick_corpus(chosen, row["text"], label if isinstance(label, str) else None, folder.name)
        pick = state.current()
if pick.corpus_id:
    ui.explain_links(pick)
