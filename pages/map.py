"""Ticket map: every ticket where the router's pooled vector puts it, and the training tickets nearest a picked one."""

from __future__ import annotations

import hashlib

import streamlit as st

from dashboard import state, ui, view
from dashboard.charts import ticketmap as charts
from dashboard.data import model, splits, ticketmap
from dashboard.text import md_escape
from ticketnet.ticketmap import PROJECTIONS

st.title("Ticket map")
st.caption("Each point is a ticket, placed by the vector the router's head reads (the mean of its final token "
           "vectors), projected to two dimensions. Tickets the router sees alike lie close. Drag a box or click a "
           "point (shift-click for more) to list tickets below; pick one there for its nearest training tickets.")

teams = list(model.card().teams)
controls = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
split = controls.segmented_control("Split", splits.available(), default="valid", key="map_split", required=True,
                                   format_func=ticketmap.split_label) or "valid"
projection = controls.segmented_control(
    "Projection", PROJECTIONS, default="PCA", key="map_projection", required=True,
    help="PCA: the two directions of most variance (fast, exact). UMAP: keeps each ticket's nearest neighbours "
         "together (seeded, so the same every time; slower, computed once per router and split).") or "PCA"
with st.spinner(f"Mapping the {split} split by {projection} (once per router and split; UMAP of a large split "
                "takes about half a minute)…"):
    table = ticketmap.split_map(split, projection)
table, label_source = ticketmap.with_label_quality(table, split, st.session_state.get("labels_source"))
options = charts.colourings(table)
label = controls.container(width=220).selectbox("Colour by", [c.label for c in options], key="map_colour")
colouring = next((c for c in options if c.label == label), options[0])

frame = charts.map_frame(table, colouring, teams)
notes = [n for n in (charts.sampled_note(len(frame), len(ticketmap.texts(split))),
                     charts.legend_note(frame, colouring, teams),
                     f"Label-issue scores from the {label_source} (Label issues page)."
                     if label_source and colouring.column == ticketmap.LABEL_QUALITY else None) if n]
if notes:
    st.caption(" ".join(md_escape(n) for n in notes))
picked_id = state.current().ticket_id                     # ringed on the map where it is drawn
event = st.altair_chart(charts.map_chart(frame, colouring, teams, projection, picked_id), key=f"map_{split}_{projection}",
                        on_select="rerun", selection_mode=[charts.BOX, charts.CLICK], width="stretch")
ids = charts.selected_ids(frame, event)

# -- the picked tickets -----------------------------------------------------------------------------------------
st.subheader("Picked tickets")
if not ids:
    st.info("Drag a box over the map or click a point to list its tickets here.", icon=":material/touch_app:")
    view.end_page()
boxed = table.set_index("ticket_id").loc[ids].reset_index()
boxed.insert(1, "heads", [ticketmap.heads_link(t) for t in boxed["ticket_id"]])
boxed = boxed[["ticket_id", "heads", "team", "predicted", "confidence", "correct", "text"]]
st.caption(f"{len(boxed):,} ticket{'s' if len(boxed) != 1 else ''} · {int((~boxed['correct']).sum()):,} misrouted · "
           "click a row for its nearest training tickets")
table_key = "map_table_" + hashlib.sha1("\n".join(ids).encode("utf-8")).hexdigest()[:12]
picked_rows = st.dataframe(
    boxed, key=table_key, on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch",
    height=min(400, 38 + 35 * len(boxed)),
    column_config={
        "ticket_id": st.column_config.TextColumn("ticket", width="small", pinned=True),
        "heads": st.column_config.LinkColumn("Heads", display_text="open ↗", width="small",
                                             help="the ticket's attention heads, in a new tab"),
        "team": st.column_config.TextColumn("true team", width="small"),
        "predicted": st.column_config.TextColumn("predicted", width="small"),
        "confidence": st.column_config.ProgressColumn("confidence", min_value=0.0, max_value=1.0, format="%.2f",
                                                      width="small"),
        "correct": st.column_config.CheckboxColumn("correct", width="small"),
        "text": st.column_config.TextColumn("text", width="large"),
    })
rows = ui.selection(picked_rows, "rows")
chosen = boxed.iloc[rows[0]] if rows and 0 <= rows[0] < len(boxed) else (boxed.iloc[0] if len(boxed) == 1 else None)
if chosen is None:
    view.end_page()

# -- its nearest training tickets -------------------------------------------------------------------------------
ticket_id = str(chosen["ticket_id"])
if state.current().ticket_id != ticket_id:
    state.pick_ticket(ticket_id)
ui.explain_links(state.current(), chosen.to_dict())
st.subheader(f"Nearest training tickets to {ticket_id}")
pool, pool_size, pool_seconds = ticketmap.neighbour_pool()
among = (f"all {pool_size:,} training tickets" if pool == "train"
         else f"the {pool_size:,} training tickets this router was fine-tuned on")
with st.spinner(f"Finding the nearest training tickets (the vectors of {among} are computed once per router, about "
                f"{pool_seconds:,} s on two cores, then read from disk)…"):
    near = ticketmap.neighbours(split, ticket_id)
if near is None:
    st.warning(f"{md_escape(ticket_id)} is not in the {split} split.", icon=":material/search_off:")
    view.end_page()
st.caption(f"{int(near['agrees'].sum())} of {len(near)} carry its true team ({md_escape(chosen['team'])}); "
           f"{int(near['routed_as'].sum())} of {len(near)} the team it was routed to "
           f"({md_escape(chosen['predicted'])}). Distance: euclidean, between the vectors the head reads (the head is "
           f"linear in them, so near means routed alike), over {among}, exactly.")
st.dataframe(near[["rank", "ticket_id", "team", "agrees", "routed_as", "distance", "text"]], hide_index=True,
             width="stretch", column_config={
                 "rank": st.column_config.NumberColumn("#", width="small"),
                 "ticket_id": st.column_config.TextColumn("training ticket", width="small"),
                 "team": st.column_config.TextColumn("its label", width="small"),
                 "agrees": st.column_config.CheckboxColumn("= true team", width="small",
                                                           help="its label is the picked ticket's true team"),
                 "routed_as": st.column_config.CheckboxColumn("= predicted", width="small",
                                                              help="its label is the team the picked ticket was "
                                                                   "routed to"),
                 "distance": st.column_config.NumberColumn("distance", format="%.3f", width="small"),
                 "text": st.column_config.TextColumn("text", width="large"),
             })
