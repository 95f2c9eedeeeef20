"""Tickets: pick a ticket (click a row, or write your own) and see how well the router does on a split."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import filters, render, state, ui, view, views
from dashboard.charts import quality as quality_charts
from dashboard.data import model, splits
from dashboard.text import md_escape
from ticketnet import tokenize
from ticketnet.interpret import DISAGREEMENT, ROLLOUT, TAU, values_of

TAU_ROLLOUT = "τ rollout"          # the table's column of rollout's τ against removal

TABLE_KEY = "ticket_table"
CONFUSION_KEY = "confusion"
SEARCH_KEY = "ticket_search"
_SHOWN_IDS = "_ticket_table_ids"


_APPLIED = "_ticket_table_applied"


def take_table_pick() -> None:
    """Pick the ticket whose row the user selected in the previous run's table.

    Each run sets the table's selection to the picked ticket's row (`_APPLIED`); a selection that differs
    from it came from the user. Its row position indexes the ids shown in that run (`_SHOWN_IDS`). A click
    that only clears the selection keeps the pick.
    """
    rows = ui.selection(st.session_state.get(TABLE_KEY), "rows")
    shown = st.session_state.get(_SHOWN_IDS, [])
    if rows != st.session_state.get(_APPLIED, []) and rows and 0 <= rows[0] < len(shown):
        state.pick_ticket(shown[rows[0]])


st.title("Tickets")
st.caption("Pick a ticket by clicking its row, or write your own. The picked ticket follows you to the Heads and "
           "Interpretation pages and lives in the URL, so a link opens the same ticket.")

card = model.card()                           # no model: a restart draws this page before torch has loaded
encoder = model.is_encoder_router()
unit = "piece" if encoder else "token"       # what the router reads: its tokenizer's pieces or words
reads = ("pieces of its tokenizer, [CLS] and [SEP] included" if unit == "piece"
         else "tokens (words, numbers and each punctuation mark)")
teams = list(card.teams)
take_table_pick()

# -- the picked ticket ----------------------------------------------------------------------------------------
pick = state.current()
probs, encoded = ui.prediction_or_stop(pick)
with st.container(border=True):
    ui.ticket_header(pick, probs, teams, encoded.tokens)
    ui.notices(encoded)

# -- write your own ticket ------------------------------------------------------------------------------------
with st.expander("Write your own ticket", expanded=pick.custom, icon=":material/edit_note:"):
    with st.form("write_ticket", border=False):
        typed = st.text_area("Ticket text", value=state.custom_text(), height=110,
                             max_chars=state.TYPED_MAX_CHARS,
                             placeholder=ui.typed_placeholder(),
                             help=f"The router reads the first {card.max_len} {reads}. Shown as plain text, "
                                  "never as HTML.")
        submitted = st.form_submit_button("Route this ticket", icon=":material/send:", type="primary")
    if submitted:
        if not typed or not tokenize(typed):       # blank, or only invisible characters (NUL, zero-width, ...)
            st.warning("The ticket is empty: type a few words first.", icon=":material/edit_off:")
        else:
            try:
                card.encode(typed)
            except ValueError as exc:
                st.warning(f"This ticket cannot be routed: {md_escape(exc)}.", icon=":material/edit_off:")
            else:
                state.pick_custom(typed)
                st.rerun()

# -- a split: quality and the table ---------------------------------------------------------------------------
st.header("Tickets of a split", divider="gray")
tickets_view = views.tickets(splits.available(), teams)
ui.link_refusals(tickets_view.restore())      # filters, sort and split survive a visit to another page
split = st.segmented_control("Split", splits.available(), key="split", required=True, default=view.start("split"),
                             on_change=filters.clear_confusion_cell,      # a cell belongs to its split
                             help="valid: used to pick the best epoch; test: held out; train: what the router "
                                  "learnt from")
split = split or "valid"
table = splits.split_table(split)
summary = splits.quality(split)

# Side by side when both fit the window, the confusion matrix below the metrics in a narrow one (st.columns would
# squeeze the metrics to "0…" and the matrix to an unreadable width at 1000 px).
quality = st.container(horizontal=True, gap="large")
q_left, q_right = quality.container(width=420), quality.container(width="content")
with q_left:
    st.subheader("Model quality")
    m1, m2, m3 = st.columns(3)
    m1.metric("accuracy", f"{summary['accuracy']:.3f}", help=f"{summary['n']} tickets in the {split} split")
    m2.metric("macro F1", f"{summary['macro_f1']:.3f}")
    if "hard_accuracy" in summary:
        m3.metric("hard tickets", f"{summary['hard_accuracy']:.3f}",
                  help=f"accuracy on the {summary['hard_n']} negated, two-topic and ambiguous tickets")
    base = splits.baseline(split)
    if base is not None:
        chosen_here = " (its regularisation was chosen on this split)" if split == "valid" else ""
        st.caption(f"A bag-of-words baseline (TF-IDF + logistic regression, fitted on the same train split) routes "
                   f"{base['accuracy']:.3f} of these tickets{chosen_here}; this router {summary['accuracy']:.3f}.")
    per_team = pd.DataFrame([{"team": t, **v} for t, v in summary["per_team"].items()])
    per_team["support"] = per_team["support"].astype(int)
    if base is not None:
        per_team["baseline"] = per_team["team"].map(base["recall"])
    st.dataframe(per_team, hide_index=True, width="stretch",
                 column_config={**{c: st.column_config.NumberColumn(format="%.3f")
                                   for c in ("precision", "recall", "f1")},
                                "baseline": st.column_config.NumberColumn(
                                    format="%.3f", help="the bag-of-words baseline's recall of the team")})
    ui.csv_download(per_team, "per-team metrics (CSV)", f"ticketnet_{split}_per_team.csv", key="dl_per_team")
with q_right:
    st.subheader("Confusion matrix")
    confusion_key = f"{CONFUSION_KEY}_{split}_{st.session_state.get(filters.CONFUSION_RESET, 0)}"
    fresh = confusion_key not in st.session_state              # drawn afresh: another page ran, or a link
    event = render.selectable_chart(quality_charts.confusion_chart, summary["confusion"], teams, key=confusion_key,
                                selection_mode=quality_charts.CONFUSION_PARAM)
    ui.chart_cell(confusion_key, event, fresh, filters.CELL_KEY)

# -- filters ----------------------------------------------------------------------------------------------------
interp = splits.split_interpretation(split)
st.subheader("Find a ticket")
filter_row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")   # wraps, labels kept whole
f1, f2, f3, f4, f5, f6, f7 = (filter_row.container(width=w) for w in (140, 150, 170, 140, 170, 200, 170))
f1.selectbox("True team", ["any", *teams], key="true_filter", index=view.start_index("true_filter", ["any", *teams]))
f2.selectbox("Predicted team", ["any", *teams], key="pred_filter",
             index=view.start_index("pred_filter", ["any", *teams]))
patterns = sorted(p for p in table["pattern"].unique() if p)
view.allow("pattern_filter", patterns, [])
if patterns:
    f3.multiselect("Pattern", patterns, key="pattern_filter", placeholder="any", default=view.start("pattern_filter"))
f4.toggle("Misrouted only", key="misrouted", value=bool(view.start("misrouted")))
f5.slider("Confidence", 0.0, 1.0, step=0.01, key="confidence_range", value=view.start("confidence_range"))
f6.text_input("Search id or text", key=SEARCH_KEY, value=view.start(SEARCH_KEY) or "",
              placeholder=f"e.g. {table['ticket_id'].iloc[0]}" if len(table) else "a ticket id or a word")
sorts = list(filters.SORTS if interp is not None else filters.SORTS[:-1])
view.allow("sort_by", sorts, filters.SORTS[0])
f7.selectbox("Sort by", sorts, key="sort_by", index=view.start_index("sort_by", sorts), help="Kept with the filters when you visit another page. Column "
             "headers also sort the table, for this view only.")
chosen = tickets_view.remember()
cell = chosen[filters.CELL_KEY]

rows = filters.apply(table, chosen, cell)
if interp is not None:
    per_ticket = pd.DataFrame({DISAGREEMENT: values_of(interp, DISAGREEMENT, ROLLOUT.name),
                               TAU_ROLLOUT: values_of(interp, TAU, ROLLOUT.name)}).reset_index()
    rows = rows.merge(per_ticket, on="ticket_id", how="left")
rows = filters.sort(rows, chosen["sort_by"])

# The essentials first (id, true and predicted team, confidence), so a narrow window shows them without scrolling
# the table sideways; a split's interpretation adds its two columns after them, before the text.
columns = ["ticket_id", "team", "predicted", "confidence", "correct", "text", "tokens", "pattern"]
if interp is not None:
    columns[5:5] = [DISAGREEMENT, TAU_ROLLOUT]
if "set_aside_chars" in rows.columns:              # routed tables written since threads are split
    columns.insert(columns.index("tokens") + 1, "set_aside_chars")
# A column the router's data leaves empty (a team's export has no generator pattern) is left out, not shown blank.
columns = [c for c in columns if c not in ("pattern", "set_aside_chars") or rows[c].astype(bool).any()]
rows = rows[columns].reset_index(drop=True)

status = f"{len(rows)} of {len(table)} tickets"
if cell:
    status += f" · confusion cell: true {cell.get('true')} → predicted {cell.get('predicted')}"
s1, s2 = st.columns([4, 1])
s1.caption(md_escape(status) + " · click a row to pick that ticket; click a column header to sort")
if cell and s2.button("Clear the confusion filter", icon=":material/filter_alt_off:"):
    filters.clear_confusion_cell()
    st.rerun()

# Show the picked ticket as the selected row if it is in view.
shown_ids = rows["ticket_id"].tolist()
st.session_state[_SHOWN_IDS] = shown_ids
picked_pos = [shown_ids.index(pick.ticket_id)] if pick.ticket_id in shown_ids else []
st.session_state[TABLE_KEY] = {"selection": {"rows": picked_pos, "columns": []}}
st.session_state[_APPLIED] = picked_pos

picked_row = rows.iloc[picked_pos[0]].to_dict() if picked_pos else None
ui.explain_links(pick, picked_row)

config = {
    "ticket_id": st.column_config.TextColumn("ticket", width="small", pinned=True),
    "text": st.column_config.TextColumn("text", width="medium"),
    "team": st.column_config.TextColumn("true team", width="small"),
    "predicted": st.column_config.TextColumn("predicted", width="small"),
    "confidence": st.column_config.ProgressColumn("confidence", min_value=0.0, max_value=1.0, format="%.2f",
                                                  width="small"),
    "correct": st.column_config.CheckboxColumn("correct", width="small"),
    "tokens": st.column_config.NumberColumn(f"{unit}s", width="small", help=f"length in {unit}s (the router reads "
                                                                          f"at most {card.max_len})"),
    "set_aside_chars": st.column_config.NumberColumn("not read (chars)", width="small",
                                                     help="characters of quoted history, forwarded chain or "
                                                          "signature the router did not read"),
    "pattern": st.column_config.TextColumn("how written", width="small",
                                           help="how the ticket was written: plain, negated, two topics, "
                                                "ambiguous, noisy (mislabelled on purpose)"),
    DISAGREEMENT: st.column_config.NumberColumn(
        "attention vs effect", format="%.2f", width="small",
        help="Attention disagrees with effect: (1 − Kendall τ between attention rollout and the removal effect) / 2: 0 = rollout ranks tokens "
             "exactly as deleting them matters, 0.5 = unrelated, 1 = reversed. Sort to find where attention "
             "misleads."),
    TAU_ROLLOUT: st.column_config.NumberColumn("rank agreement", format="%.2f", width="small",
                                               help="Kendall τ between attention rollout and the removal effect: 1 = "
                                                    "rollout ranks the words as deleting them matters, 0 = unrelated, "
                                                    "−1 = reversed"),
}
st.space("small")                # room for the table's hover toolbar, which floats above the table's top edge
st.dataframe(rows, key=TABLE_KEY, on_select="rerun", selection_mode="single-row", hide_index=True,
             column_config=config, width="stretch", height=460)

d1, d3 = st.columns([2, 3])                    # the download label whole at 1000 px ("these tick…" in a quarter)
with d1:
    ui.csv_download(rows, "these tickets (CSV)", f"ticketnet_{split}_tickets.csv", key="dl_tickets")

with d3:
    if encoder:
        # The split-wide interpretation reads the Tiny router's tokens; the scan does the encoder's words.
        st.caption("Attention against removal across the split is the Corpus page's scan on an encoder router: "
                   "level effects removes each word of every ticket and sets rollout and the last layer beside it.")
    else:
        ui.split_status(split, "interpret", "Split interpretation")
        if interp is None:
            ui.split_interpretation_button(split, len(table), key="btn_split_tickets")
        else:
            st.caption("Sort by *attention disagrees with effect* (the Sort by control above). The Interpretation "
                       "page shows the split-wide results.")
            ui.csv_download(interp, "split interpretation (CSV)", f"ticketnet_{split}_interpretation.csv",
                            key="dl_interp")
