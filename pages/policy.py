"""Routing policy: which tickets may skip the triage queue, at what misroute rate, and each queued one's shortlist."""

from __future__ import annotations

import streamlit as st

from dashboard import render, ui, view, views
from dashboard.charts import policy as policy_charts
from dashboard.data import policy as policy_data
from dashboard.narrative import policy as policy_words
from dashboard.text import md_escape

MESSAGES_SHOWN = 3               # per-team messages in the warning; a 12-team router's others fold away


def summary_table(df, by: str) -> None:
    """A small summary table (a row per split or team) as a static table that wraps its cells: as a data grid, at
    1000 px it cut the intervals ("97.2 % (95.6–98.4") and pushed "misroutes per 10,000" out of sight."""
    st.table(df.set_index(by))


def draw(template, args: tuple, data: dict) -> None:
    """A chart template, built and converted once per `args` (its structure), drawn with this run's `data`."""
    spec = render.chart_spec(template, *args)
    render.show_chart(policy_charts.fill(spec, data) if isinstance(spec, dict) else policy_charts.with_data(spec, data))


st.title("Routing policy")
st.caption("Which tickets may skip the human triage queue. One confidence threshold per predicted team is fitted on "
           "the **valid** split for the target below, and a conformal prediction set per ticket is calibrated there "
           "too; every number shown is measured on data they were not fitted on (test, and the hand-written set "
           "where there is one), with 95 % bootstrap intervals. Computed from the stored predictions, no model run.")

on_splits = policy_data.eval_splits()
teams = list(policy_data.teams())
policy_view = views.policy(on_splits)
ui.link_refusals(policy_view.restore())

# -- the choices --------------------------------------------------------------------------------------------------
controls = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
with controls.container(width=260):
    kind = st.radio("Target", list(policy_data.TARGETS), key="policy_target", horizontal=True,
                    index=view.start_index("policy_target", list(policy_data.TARGETS)),
                    format_func=policy_data.TARGETS.__getitem__,
                    help="Precision: the share of auto-routed tickets that reach the right team. Automation rate: "
                         "the share of all tickets that skip the queue.")
with controls.container(width=220):
    if kind == policy_data.PRECISION:
        lo, hi, step = policy_data.PRECISION_RANGE
        value = st.slider("Target precision", lo, hi, step=step, format="%.3f", key="policy_precision",
                          value=view.start("policy_precision"),
                          help="Each team's threshold is the lowest confidence at which the tickets predicted for "
                               "it reach this precision on valid.")
    else:
        lo, hi, step = policy_data.AUTOMATION_RANGE
        value = st.slider("Target automation rate", lo, hi, step=step, format="%.2f", key="policy_automation",
                          value=view.start("policy_automation"),
                          help="The share of tickets to auto-route; the thresholds spend it where the router is "
                               "most often right.")
with controls.container(width=200):
    lo, hi, step = policy_data.ALPHA_RANGE
    alpha = st.slider("α of the prediction sets", lo, hi, step=step, format="%.2f", key="policy_alpha",
                      value=view.start("policy_alpha"),
                      help="Each ticket's set of teams misses its true team at most this often (for tickets drawn "
                           "like valid's): 0.05 asks for sets that hold it 95 % of the time.")
with controls.container(width=130):
    method = st.segmented_control("Set method", list(policy_data.METHODS), key="policy_method", required=True,
                                  default=view.start("policy_method"),
                                  format_func=policy_data.METHODS.__getitem__,
                                  help="LAC: the teams whose probability clears one cut (smallest sets). APS: the "
                                       "most probable teams until their probabilities add up to the cut (sets "
                                       "adapt to how unsure the router is).") or "lac"
if kind == policy_data.PRECISION:
    with controls.container(width=220):
        st.segmented_control("Vouch for it", list(policy_data.GUARANTEES), key="policy_vouch", required=True,
                             default=view.start("policy_vouch"),
                             format_func=policy_data.GUARANTEE_WORDS.__getitem__,
                             help="No: each team's threshold is the lowest at which valid reaches the target, the "
                                  "best guess, which new tickets miss about half the time. 90 % or 95 %: only "
                                  "thresholds at which valid shows the target with that probability (exact binomial "
                                  "tests); teams valid cannot vouch for go to a person.")
chosen = policy_view.remember()
delta = policy_data.guarantee(kind, chosen["policy_vouch"])

fitted = policy_data.thresholds(kind, value, delta)
if not fitted.reached:
    if delta is not None:
        lead = (f"Valid cannot vouch for precision {value:g} with probability {1 - delta:g} for every team: the teams "
                "it cannot vouch for auto-route nothing, and the results below are what that leaves.")
    else:
        target_name = "precision" if kind == policy_data.PRECISION else "automation rate"
        lead = (f"The target {target_name} {value:g} is out of reach on valid: the best reachable, the highest "
                f"target every team reaches, is **{fitted.best_reachable:.3f}**. A team that cannot reach the target "
                "auto-routes nothing; the results below are what that leaves.")
    st.warning(lead + "".join(f"\n\n- {md_escape(m)}" for m in fitted.messages[:MESSAGES_SHOWN]),
               icon=":material/block:")
    if len(fitted.messages) > MESSAGES_SHOWN:
        with st.expander(f"{len(fitted.messages) - MESSAGES_SHOWN} more"):
            st.markdown("\n".join(f"- {md_escape(m)}" for m in fitted.messages[MESSAGES_SHOWN:]))
elif fitted.messages:
    st.caption(" · ".join(md_escape(m) for m in fitted.messages))

with st.expander("What “Vouch for it” and α mean", icon=":material/help:"):
    st.markdown(md_escape(policy_words.VOUCH_WORDS) + "\n\n" + md_escape(policy_words.ALPHA_WORDS))

results = {split: policy_data.report(kind, value, split, delta) for split in on_splits}
missed = policy_words.target_warnings(kind, value, results,
                                      {split: policy_data.curves(split)[0] for split in on_splits},
                                      vouched=delta is not None)
if missed:                                       # one box, a point each
    st.warning("\n".join(f"- {md_escape(sentence)}" for sentence in missed), icon=":material/report:")
try:
    set_results, sets_problem = {split: policy_data.sets(alpha, method, split)[0] for split in on_splits}, None
except ValueError as exc:                        # valid too small for this α, or APS on two teams
    set_results, sets_problem = {}, str(exc)

# -- the consequences ---------------------------------------------------------------------------------------------
st.header("What this policy does", divider="gray")
headline = st.container(horizontal=True, gap="medium")
for split in on_splits:
    overall = results[split]["overall"]
    headline.metric(f"automation rate · {split}", policy_words.percent(overall["coverage"]["value"]), width="content",
                    help=f"{overall['auto_routed']:,} of {overall['n']:,} tickets auto-routed; 95 % interval "
                         f"{policy_words.interval_text(overall['coverage'], percent=True)}")
    headline.metric(f"misroutes per 10,000 · {split}", policy_words.count(overall["misroutes_per_10000"]["value"]),
                    width="content",
                    help=f"misrouted auto-routed tickets per 10,000 incoming ones ({overall['misroutes']:,} on the "
                         f"{overall['n']:,} tickets); 95 % interval "
                         f"{policy_words.interval_text(overall['misroutes_per_10000'])}")
summary_table(policy_words.results_table(results), "split")

st.subheader("Prediction sets")
if sets_problem:
    st.warning(f"No prediction sets at these settings: {md_escape(sets_problem)}.", icon=":material/block:")
else:
    st.caption(f"Each ticket's set holds its true team with probability at least 1 − α = {policy_words.percent(1 - alpha, 0)} for "
               "tickets drawn like valid's (split-conformal, calibrated on valid); the share measured on each split "
               "is shown with its Wilson 95 % interval.")
    summary_table(policy_words.sets_table(set_results, alpha), "split")
    for note in policy_words.coverage_notes(set_results, alpha):
        st.info(md_escape(note), icon=":material/info:")

# -- where it sits ------------------------------------------------------------------------------------------------
st.header("Per team and on the curve", divider="gray")
split = st.segmented_control("Shown on", on_splits, key="policy_on", required=True, default=view.start("policy_on"),
                             help="The split the curves, the per-team numbers and the queue below are measured "
                                  "on.") or on_splits[0]
areas = policy_data.curves(split)[2]
# Side by side where the window has room (1366 px), one under the other at 1000 px; the captions below both, since
# a caption in a content-wide column widens it to the whole row.
figures = st.container(horizontal=True, gap="large")
with figures.container(width="content"):
    point = policy_data.operating_point(results[split])
    curve, reference, _areas = policy_data.curves(split)
    curves_table = policy_charts.curves_frame(curve, reference)
    draw(policy_charts.risk_coverage_template, (curves_table, policy_charts.risk_top(curves_table, point),
                                                f"risk–coverage on {split}"),
         {policy_charts.POINT_DATA: policy_charts.point_frame(point)})
if set_results:
    with figures.container(width="content"):
        render.chart(policy_charts.set_size_chart, policy_charts.set_size_frame(set_results))
st.caption(md_escape(policy_words.area_sentence(areas))
           + (f" Set sizes: {policy_data.METHODS[method]} sets at α = {alpha:g}, calibrated on valid." if set_results
              else ""))

stored = policy_data.stored_policy()
per_team = policy_charts.per_team_frame(results[split]["per_team"], teams)
target_line = value if kind == policy_data.PRECISION else None
draw(policy_charts.team_thresholds_template,
     (tuple(per_team["team"]), policy_charts.precision_low(per_team, target_line), target_line is not None,
      policy_charts.threshold_low(per_team)),
     policy_charts.team_thresholds_data(per_team, target_line))
summary_table(policy_words.per_team_table(per_team, stored if not isinstance(stored, str) else None), "team")

# -- the stored policy ----------------------------------------------------------------------------------------------
if isinstance(stored, str):
    st.warning(md_escape(stored), icon=":material/error:")
elif stored is not None:
    st.header("The router's stored policy", divider="gray")
    st.caption(md_escape(policy_words.stored_sentence(stored)) + " `predict` and `scan` use it for their `auto` and "
               "`team_set` columns.")
    stored_results = {split: policy_data.stored_results(split) for split in on_splits}
    summary_table(policy_words.comparison_table(results, set_results, stored_results), "policy")
    st.button("Set the sliders to the stored policy", icon=":material/settings_backup_restore:",
              key="policy_adopt_stored", on_click=views.adopt_stored_policy, args=(stored,))
else:
    st.caption("This router has no stored policy: `.venv/bin/python -m ticketnet policy --router DIR --precision 0.98 "
               "--alpha 0.05` stores one in its router.json, and `predict` and `scan` then add `auto` and "
               "`team_set` columns.")

# -- the queue ------------------------------------------------------------------------------------------------------
st.header("Tickets that would go to a person", divider="gray")
queue = policy_data.queue(kind, value, alpha, method, split, with_sets=not sets_problem, delta=delta)
total = results[split]["overall"]["n"]
st.caption(f"{len(queue):,} of {total:,} {split} tickets stay in the queue, least confident first, each with its "
           f"prediction set as the triage shortlist. The links open the ticket on the Heads and Interpretation "
           "pages.")
st.dataframe(queue, hide_index=True, width="stretch", height=420, column_order=(
    "ticket_id", "team_set", "heads", "interpretation", "predicted", "confidence", "team", "true_in_set", "set_size",
    "text"), column_config={
    "ticket_id": st.column_config.TextColumn("ticket", pinned=True),
    "team_set": st.column_config.TextColumn("prediction set", width="medium"),
    "heads": st.column_config.LinkColumn("Heads", display_text="Heads", width="small"),
    # "medium": at "small" (75 px) the header and every link read "Interpretati".
    "interpretation": st.column_config.LinkColumn("Interpretation", display_text="Interpretation", width="medium"),
    "set_size": st.column_config.NumberColumn("set size", format="%d"),
    "predicted": st.column_config.TextColumn("predicted"),
    "confidence": st.column_config.ProgressColumn("confidence", min_value=0.0, max_value=1.0, format="%.2f"),
    "team": st.column_config.TextColumn("true team"),
    "true_in_set": st.column_config.CheckboxColumn("true team in set"),
    "text": st.column_config.TextColumn("text", width="medium")})
ui.csv_download(policy_data.spreadsheet_safe(queue.drop(columns=["heads", "interpretation"])),
                "these tickets (CSV)", f"ticketnet_{split}_queue.csv", key="dl_policy_queue")
