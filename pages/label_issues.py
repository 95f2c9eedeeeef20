"""Label issues: which training labels to doubt (cleanlab over out-of-fold probabilities), and which teams overlap."""

from __future__ import annotations

import streamlit as st

from dashboard import render, state, ui, view
from dashboard.charts import labels as label_charts
from dashboard.data import labels as label_data
from dashboard.data import splits
from dashboard.text import md_escape

ANY = "any"
TABLE_KEY = "labels_table"

st.title("Label issues")
st.caption("A router is only as good as its labels. Each ticket is scored by a model that never trained on it "
           "(k-fold, out-of-fold probabilities); cleanlab's confident learning then flags the labels those "
           "probabilities contradict and ranks every ticket by a label-quality score (low: doubtful).")

st.session_state.setdefault("labels_source", label_data.SOURCES[0])   # drawn selected, not blank
source = st.segmented_control("Probabilities from", list(label_data.SOURCES), key="labels_source", required=True,
                              format_func=label_data.SOURCE_LABELS.get, width="content") or label_data.SOURCES[0]
found = label_data.results(source)
if not found:
    refusal = label_data.router_refusal("train") if source == "router" else None
    if refusal:
        st.info(f"No out-of-fold result from the **{source}** for this router yet, and the command would not compute "
                "one on this split:", icon=":material/info:")
        st.warning(md_escape(refusal), icon=":material/timer_off:")
        st.caption("Pick the baseline above: its out-of-fold probabilities take minutes and rank the same way.")
        view.end_page()
    st.info(f"No out-of-fold result from the **{source}** for this router yet. Compute one on the command line "
            f"(it is cached in the router folder, and this page reads it):", icon=":material/info:")
    st.code(label_data.command(source), language="bash")
    if source == "baseline":
        n = label_data.split_size("train")
        if n is not None:
            st.caption(f"Or compute the baseline's {label_data.CHEAP_FOLDS}-fold version here: three TF-IDF + "
                       f"logistic regression fits on {n:,} training tickets (seconds for a few thousand tickets; "
                       "on Larkfield's 60,000 it takes minutes, see docs/label-issues.md).")
            if st.button("Compute the baseline's out-of-fold probabilities", icon=":material/calculate:",
                         key="labels_run_baseline"):
                with st.spinner("Fitting the baseline on each fold…"):
                    try:
                        label_data.run_baseline("train")
                    except ValueError as exc:
                        st.error(md_escape(exc), icon=":material/error:")
                        view.end_page()
                st.rerun()
    else:
        st.caption("Or pick the baseline above: its probabilities are cheaper to compute and rank the same way.")
    view.end_page()

result = found[0]
if len(found) > 1:
    labels = {r.label: r for r in found}
    result = labels[st.selectbox("Result", list(labels), key="labels_result")]
ranked = label_data.ranked(result)
if ranked is None:
    st.warning(f"The cached result was computed on another version of the {md_escape(result.split)} split. "
               "Compute it again:", icon=":material/warning:")
    st.code(label_data.command(source, result.split, result.folds, result.epochs), language="bash")
    view.end_page()
table, teams, settings = ranked.table, list(ranked.teams), ranked.settings
flagged = int(table["flagged"].sum())
detail = label_data.detail(settings) if source == "router" else f"C {settings.get('C')}"
st.caption(f"{len(table):,} tickets of the **{md_escape(result.split)}** split · {result.folds} folds · "
           f"{md_escape(detail)} · "
           f"computed in {settings.get('seconds', 0):,.0f} s")

metrics = st.container(horizontal=True, gap="medium")
metrics.metric("tickets", f"{len(table):,}", width="content")
metrics.metric("flagged by cleanlab", f"{flagged:,}", width="content",
               help=f"{flagged / max(1, len(table)):.1%} of the split, at cleanlab's default (prune by noise rate)")
metrics.metric("out-of-fold accuracy", f"{(table['given_team'] == table['suggested_team']).mean():.3f}",
               help="how often the fold models agree with the given label", width="content")

# -- teams -----------------------------------------------------------------------------------------------------
st.header("Teams", divider="gray")
row = st.container(horizontal=True, gap="large")
with row.container(width="content"):
    st.subheader("Estimated wrong labels per team")
    render.chart(label_charts.quality_chart, ranked.quality, width="content")
with row.container(width="content"):
    st.subheader("Overlapping teams")
    st.caption("Tickets cleanlab estimates could belong to either team of a pair: candidates to merge, or to tell "
               "apart more clearly in the routing guide.")
    render.chart(label_charts.overlap_chart, ranked.pairs, teams, width="content")
    if len(ranked.pairs):
        top = ranked.pairs.iloc[0]
        st.caption(f"Most overlap: **{md_escape(top['team_a'])}** and **{md_escape(top['team_b'])}**, about "
                   f"{int(top['tickets']):,} tickets ({top['joint']:.1%} of the split).")

# -- the ranked tickets -----------------------------------------------------------------------------------------
st.header("Labels to doubt", divider="gray")
filter_row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
given = filter_row.container(width=170).selectbox("Given team", [ANY, *teams], key="labels_given")
suggested = filter_row.container(width=170).selectbox("Suggested team", [ANY, *teams], key="labels_suggested")
score = filter_row.container(width=230).slider("Label-quality score", 0.0, 1.0, (0.0, 1.0), step=0.01,
                                               key="labels_score")
only = filter_row.container(width=150).toggle("Flagged only", value=True, key="labels_flagged")
matching = label_data.filtered(table, None if given == ANY else given, None if suggested == ANY else suggested,
                           tuple(score), bool(only))
st.caption(f"{len(matching):,} of {len(table):,} tickets match · ranked by score, flagged first · click a row to pick "
           "that ticket for the Heads and Interpretation pages")
shown = matching.head(2_000)
columns = [c for c in ("rank", "ticket_id", "given_team", "suggested_team", "score", "p_given", "text",
                       "p_suggested", "flagged") if c in shown.columns]
event = st.dataframe(shown[columns], key=f"{TABLE_KEY}_{hash((given, suggested, tuple(score), only, result.path))}",
                     on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch", height=420,
                     column_config={
                         "ticket_id": st.column_config.TextColumn("ticket", pinned=True),
                         "text": st.column_config.TextColumn("text", width="large"),
                         "given_team": st.column_config.TextColumn("given team"),
                         "suggested_team": st.column_config.TextColumn("suggested team"),
                         "score": st.column_config.NumberColumn("score", format="%.3f",
                                                                help="cleanlab's label-quality score"),
                         "p_given": st.column_config.ProgressColumn("p(given)", min_value=0.0, max_value=1.0,
                                                                    format="%.2f"),
                         "p_suggested": st.column_config.NumberColumn("p(suggested)", format="%.2f")})
if len(matching) > len(shown):
    st.caption(f"The first {len(shown):,} are listed; the export below holds all {len(matching):,}.")
ui.csv_download(label_data.relabel_queue(matching), "Export the relabel queue (CSV)",
                f"relabel-queue-{result.split}.csv", key="labels_export")
rows = ui.selection(event, "rows")
ids = shown["ticket_id"].tolist()
chosen = ids[rows[0]] if rows and rows[0] < len(ids) else None
by_id = st.selectbox("…or pick by id", ["—", *ids], key="labels_pick_id", help="the tickets listed above")
if chosen is None and by_id != "—":
    chosen = by_id
if chosen is not None:
    picked = shown[shown["ticket_id"] == chosen].iloc[0]
    if chosen != state.current().ticket_id:
        if splits.find_ticket(chosen) is not None:
            state.pick_ticket(chosen)
        else:                                         # a ticket of a CSV outside the router's splits: by its text
            state.pick_custom(str(picked.get("text", "")))
    ui.explain_links(state.current())
    try:
        found_evidence = label_data.evidence(str(picked.get("text", "")), picked["given_team"],
                                             picked["suggested_team"])
    except ValueError:                                # a ticket with no token the router knows
        found_evidence = None
    if found_evidence is not None:
        st.markdown(f"**Evidence** (deleting the word changes the router's log-odds of the team by this much): "
                    f"for the given team *{md_escape(picked['given_team'])}*: "
                    f"{md_escape(found_evidence['evidence_given'])} · for the suggested team "
                    f"*{md_escape(picked['suggested_team'])}*: {md_escape(found_evidence['evidence_suggested'])}")
