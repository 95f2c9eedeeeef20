"""The route-intervention views (issue 13) run headless with AppTest on T-65052 and a ~100-token valid ticket: each
section opens, shows the library's own numbers (τ, ablation, patching, phrase deletion and Shapley), follows the unit
toggle, and says why a long ticket gets no effect map."""

from __future__ import annotations

import re

import pytest
import torch

from tests.conftest import DEFAULT_TICKET, HEADS, INTERPRETATION, app_test

pytest.importorskip("streamlit.testing.v1")



def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _plain(value) -> str:
    return re.sub(r"\\(.)", r"\1", str(value))


def _markdown(at) -> str:
    return "\n".join(_plain(e.value) for e in at.markdown)


def _captions(at) -> str:
    return "\n".join(_plain(e.value) for e in at.caption)


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _charts(at) -> list[dict]:
    import json

    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


@pytest.fixture(scope="module")
def long_ticket(artifacts):
    """The valid ticket whose token count is nearest 100 (through the router), over the 48-token effect-map limit."""
    from ticketnet import Router, load_split

    r = Router.load(artifacts.weights)
    rows = load_split(artifacts.data / "valid.csv")
    row = min(rows, key=lambda x: abs(len(r.encode(x["text"]).ids) - 100))
    assert len(r.encode(row["text"]).ids) > 48
    return row


@pytest.fixture(scope="module")
def many_phrases_ticket(artifacts):
    """The valid ticket with the most phrases: over the 10 that exact Shapley enumerates."""
    from ticketnet import Router, load_split
    from ticketnet.interpret import split_phrases
    from ticketnet.interpret.interventions.shapley import EXACT_MAX

    r = Router.load(artifacts.weights)
    rows = load_split(artifacts.data / "valid.csv")
    row = max(rows, key=lambda x: len(split_phrases(x["text"], len(r.encode(x["text"]).ids))))
    assert len(split_phrases(row["text"], len(r.encode(row["text"]).ids))) > EXACT_MAX
    return row


def _row(valid_rows, ticket_id):
    return next(r for r in valid_rows if r["ticket_id"] == ticket_id)


def _open(at, page, *keys):
    at.switch_page(page).run()
    _ok(at)
    for k in keys:
        at.session_state[k] = True
    at.run()
    _ok(at)
    return at


def _ids(router, text):
    return torch.tensor(router.encode(text).ids)


# -- Heads: edge knockout -----------------------------------------------------------------------------------------
def test_sections_stay_closed_until_opened(app_env):
    at = app_test(ticket=DEFAULT_TICKET).run()
    at.switch_page(HEADS).run()
    _ok(at)
    assert [e.label for e in at.expander][-2:] == ["Cutting attention edges: does the weight matter?",
                                                  "Switching heads off on this ticket"]
    assert not any(m.label.startswith("Kendall") for m in at.metric)     # nothing computed while closed
    assert len(at.get("vega_lite_chart")) == 5                          # the page's first view as before


def test_edge_knockout_shows_the_librarys_tau_and_the_effect_maps(app_env, router, valid_rows):
    from ticketnet.interpret import edge_knockout, effect_map
    from ticketnet.lens.inspection import inspect_ticket

    text = _row(valid_rows, DEFAULT_TICKET)["text"]
    at = _open(app_test(ticket=DEFAULT_TICKET).run(), HEADS, "open_knockout")
    ins = inspect_ticket(router, text)
    ids, target, query = _ids(router, text), int(ins.predicted), ins.tokens.index("not")
    head = int(ins.patterns[0, :, query, :].max(-1).values.argmax())     # default: the largest weight on the row
    assert at.selectbox(key=f"ko_head_{_key(text)}_1_{query}").value == head
    ko = edge_knockout(router.model, ids, 0, head, query, target)
    from dashboard.narrative import fmt

    assert _metric(at, "Kendall τ, weight against support (this row)") == fmt(ko.tau("logit_diff"))
    assert "logit difference" in _captions(at)
    edges = _table(at, "support for payments (logit difference)")
    assert len(edges) and set(edges["edge"]) <= {"high weight, low support", "low weight, high support"}
    assert not any(v in ("+0.00", "-0.00", "0.00") for v in edges["support for payments (logit difference)"])
    taus = _table(at, "Kendall τ (n² weights vs n² supports)")
    want = [fmt(effect_map(router.model, ids, 0, h, target).tau("logit_diff")) for h in range(4)]
    assert list(taus["Kendall τ (n² weights vs n² supports)"]) == want
    titles = [str(c.get("title", "")) for c in _charts(at)]
    assert any("support of each edge" in t for t in titles) and any("attention weights" in t for t in titles)
    assert not at.info                                                   # ≤ 48 tokens: no note

    at.segmented_control(key="heads_unit").set_value("prob").run()      # the unit toggle
    _ok(at)
    assert _metric(at, "Kendall τ, weight against support (this row)") == fmt(ko.tau("prob"))
    assert "Score: p(payments)" in _captions(at) or "probability" in _captions(at)
    assert list(_table(at, "Kendall τ (n² weights vs n² supports)").iloc[:, 1]) == \
        [fmt(effect_map(router.model, ids, 0, h, target).tau("prob")) for h in range(4)]


def _key(text: str) -> str:
    import hashlib

    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def test_a_long_ticket_gets_the_row_view_and_a_note_instead_of_maps(app_env, router, long_ticket):
    from dashboard.narrative import fmt
    from ticketnet.interpret import edge_knockout
    from ticketnet.lens.inspection import inspect_ticket

    text = long_ticket["text"]
    at = _open(app_test(ticket=long_ticket["ticket_id"]).run(), HEADS, "open_knockout")
    ins = inspect_ticket(router, text)
    query = ins.tokens.index("not") if "not" in ins.tokens else 0
    head = int(ins.patterns[0, :, query, :].max(-1).values.argmax())
    ko = edge_knockout(router.model, _ids(router, text), 0, head, query, int(ins.predicted))
    assert _metric(at, "Kendall τ, weight against support (this row)") == fmt(ko.tau("logit_diff"))
    note = " ".join(i.value for i in at.info)
    assert "up to 48 tokens" in note and f"this one has {len(ins.tokens)}" in note
    assert not any("support of each edge" in str(c.get("title", "")) for c in _charts(at))


# -- Heads: head ablation -----------------------------------------------------------------------------------------
def test_head_ablation_zero_and_mean_agree_with_the_library(small_data, router):
    from dashboard.narrative import effect
    from ticketnet import load_split
    from ticketnet.interpret import head_ablation, head_means

    rows = load_split(small_data / "valid.csv")
    text = _row(rows, DEFAULT_TICKET)["text"]
    ids = _ids(router, text)
    target = int(router.predict_texts([text])[0].argmax())
    at = _open(app_test(ticket=DEFAULT_TICKET).run(), HEADS, "open_ablation")
    grid = next(c for c in _charts(at) if "layer" in c and "block_label" in str(c))
    assert "support for payments (logit difference)" in str(grid)
    zero = head_ablation(router.model, ids, target, "zero")
    top = zero.loc[zero.support_logit_diff.abs().idxmax()]
    assert f"block {top.block} head {top['head']} with zeros" in _markdown(at)
    assert effect(top.support_logit_diff) in _markdown(at)

    at.segmented_control(key="ablation_mode").set_value("mean").run()
    _ok(at)
    means = head_means(router.model, [router.encode(r["text"]).ids for r in rows])   # the 40-ticket valid split
    mean = head_ablation(router.model, ids, target, "mean", means)
    top = mean.loc[mean.support_logit_diff.abs().idxmax()]
    assert f"block {top.block} head {top['head']} with its mean output" in _markdown(at)
    assert effect(top.support_logit_diff) in _markdown(at)


# -- Interpretation: contrast pair and patching ----------------------------------------------------------------------
def test_contrast_editor_is_prefilled_and_patching_matches_the_library(app_env, router, valid_rows):
    from dashboard.narrative import fmt
    from ticketnet.interpret import contrast_patching, suggest_edit

    row = _row(valid_rows, DEFAULT_TICKET)
    at = _open(app_test(ticket=DEFAULT_TICKET).run(), INTERPRETATION, "open_contrast")
    edit = at.text_area(key=f"contrast_edit_{_key(row['text'])}").value
    assert edit == suggest_edit(row["text"], row["evidence"])
    assert "It's not a delivery problem and" in row["text"] and "delivery problem" not in edit
    assert edit.startswith("I keep the leaf blower.")
    assert _metric(at, "prediction, ticket (a)") == _metric(at, "prediction") == "payments"
    assert _metric(at, "prediction, edit (b)") == router.teams[int(router.predict_texts([edit])[0].argmax())]
    ea, eb = router.encode(row["text"]), router.encode(edit)
    target = int(router.predict_texts([row["text"]])[0].argmax())
    cp = contrast_patching(router.model, torch.tensor(ea.ids), torch.tensor(eb.ids), target, ea.tokens, eb.tokens)
    md = _markdown(at)
    assert f"logit difference **{fmt(cp.values_b['logit_diff'])}**" in md
    heads = cp.heads[cp.heads.direction == "a→b"]
    best = heads.loc[heads.share_logit_diff.abs().idxmax()]
    assert f"block {best.block} head {best['head']} ({fmt(best.share_logit_diff)})" in md
    specs = _charts(at)
    assert sum("heads, " in str(c.get("title", "")) for c in specs) == 2                 # both directions
    assert sum("residual stream, " in str(c.get("title", "")) for c in specs) == 2
    assert "Unaligned, drawn grey" in _captions(at) and "0:it" in _captions(at)         # deleted tokens marked

    at.segmented_control(key="interp_unit").set_value("prob").run()
    _ok(at)
    best = heads.loc[heads.share_prob.abs().idxmax()]
    assert "share of the change in probability" in _markdown(at)
    assert f"block {best.block} head {best['head']} ({fmt(best.share_prob)})" in _markdown(at)


# -- Interpretation: phrases, Shapley, ERASER and evidence ------------------------------------------------------------
def _phrase_checks(at, router, text, unit, method):
    from dashboard.narrative import effect
    from ticketnet.interpret import phrase_deletions, phrase_shapley, split_phrases

    ids = _ids(router, text)
    target = int(router.predict_texts([text])[0].argmax())
    phrases = split_phrases(text, ids.numel())
    team = router.teams[target]
    unit_name = {"logit_diff": "logit difference", "prob": "probability"}[unit]
    table = _table(at, f"Shapley value: support for {team} ({unit_name})")
    assert list(table["phrase"]) == [p.text for p in phrases]
    shap = phrase_shapley(router.model, ids, phrases, target, unit, n_samples=64)
    assert shap.method == method
    assert list(table[f"Shapley value: support for {team} ({unit_name})"]) == [effect(v) for v in shap.values.tolist()]
    d = phrase_deletions(router.model, ids, phrases, target)
    assert list(table[f"deleted alone: support for {team} ({unit_name})"]) == \
        [effect(v) for v in d[d.kind == "single"][f"support_{unit}"]]
    return d


def test_phrases_shapley_and_the_phrase_rows_of_eraser_and_evidence(app_env, router, valid_rows):
    from ticketnet.interpret import (
        aopc,
        eraser,
        evidence_mask,
        evidence_recovery,
        phrase_deletions,
        phrase_shapley,
        split_phrases,
        token_scores,
    )

    row = _row(valid_rows, DEFAULT_TICKET)
    at = _open(app_test(ticket=DEFAULT_TICKET).run(), INTERPRETATION, "open_phrases")
    _phrase_checks(at, router, row["text"], "logit_diff", "exact")
    assert "Exact Shapley values: all 16 coalitions of the 4 phrases" in _captions(at)
    assert len(_table(at, "flips")) == 6                                                 # every pair of 4 phrases

    # The phrase signals are computed when asked for; then they sit in the page's ERASER and evidence tables, beside
    # single-token deletion, and in the URL.
    shown = _table(at, "comprehensiveness").set_index("signal")
    assert {"removal", "rollout"} <= set(shown.index) and not {"phrase deletion", "phrase shapley"} & set(shown.index)
    assert "phrase shapley" not in at.multiselect(key="eraser_signals").options
    at.segmented_control(key="phrase_signals").set_value("on").run()
    _ok(at)
    assert at.query_params["phrases"] == ["1"] or at.query_params["phrases"] == "1"
    ids = _ids(router, row["text"])
    target = int(router.predict_texts([row["text"]])[0].argmax())
    phrases = split_phrases(row["text"], ids.numel())
    d = phrase_deletions(router.model, ids, phrases, target, pairs=False)
    signals = {"phrase deletion": token_scores(phrases, torch.tensor(d[d.kind == "single"].support_logit_diff.values)),
               "phrase shapley": token_scores(phrases, phrase_shapley(router.model, ids, phrases, target).values)}
    want = aopc(eraser(router.model, ids, signals, target)).set_index("signal").round(3)
    shown = _table(at, "comprehensiveness").set_index("signal")
    assert {"removal", "rollout", "phrase deletion", "phrase shapley"} <= set(shown.index)
    for s in signals:
        assert shown.loc[s, "comprehensiveness"] == pytest.approx(want.loc[s, "comprehensiveness"], abs=1e-9)
    gold = evidence_mask(row["text"], ids.numel(), row["evidence"])
    evidence = _table(at, "auprc").set_index("signal")
    assert {"removal", "phrase deletion", "phrase shapley"} <= set(evidence.index)
    assert evidence.loc["phrase shapley", "auprc"] == pytest.approx(
        round(evidence_recovery(signals["phrase shapley"], gold)["auprc"], 3))

    at.segmented_control(key="interp_unit").set_value("prob").run()                      # the unit toggle
    _ok(at)
    _phrase_checks(at, router, row["text"], "prob", "exact")
    assert "Score: p(payments)" in _captions(at)

    at.selectbox(key="focus_signal").set_value("phrase shapley").run()                   # then switched off again
    _ok(at)
    at.segmented_control(key="phrase_signals").set_value("off").run()
    _ok(at)
    assert "phrases" not in at.query_params and at.selectbox(key="focus_signal").value == "rollout"
    assert not set(PHRASES := ("phrase deletion", "phrase shapley")) & set(at.multiselect(key="eraser_signals").value)
    assert not set(PHRASES) & set(_table(at, "kendall_tau")["signal"])


def test_a_ticket_of_many_phrases_gets_sampled_shapley_and_says_so(app_env, router, many_phrases_ticket):
    at = _open(app_test(ticket=many_phrases_ticket["ticket_id"]).run(), INTERPRETATION, "open_phrases",
               "open_contrast")
    _phrase_checks(at, router, many_phrases_ticket["text"], "logit_diff", "sampling")
    assert "Sampled Shapley values" in _captions(at) and "64 random phrase orders" in _captions(at)
    assert sum("residual stream, " in str(c.get("title", "")) for c in _charts(at)) == 2


def _redundant_ticket(router, rows) -> dict:
    """The first valid ticket with two phrases that each leave the team alone but flip it deleted together."""
    import torch

    from ticketnet.interpret import phrase_deletions, redundant_pairs, split_phrases

    for row in rows:
        ids = router.encode(row["text"]).ids
        phrases = split_phrases(row["text"], len(ids))
        if not 2 <= len(phrases) <= 10:
            continue
        x = torch.tensor(ids)
        with torch.inference_mode():
            target = int(router.model(x[None]).argmax())
        if len(redundant_pairs(phrase_deletions(router.model, x, phrases, target))):
            return row
    pytest.fail("no valid ticket has two phrases that only matter together: nothing to show the statement on")


def test_two_phrases_that_only_matter_together_are_named(app_env, router, valid_rows):
    from ticketnet.interpret import redundant_pairs, split_phrases

    row = _redundant_ticket(router, valid_rows)
    at = _open(app_test(ticket=row["ticket_id"]).run(), INTERPRETATION, "open_phrases")
    d = _phrase_checks(at, router, row["text"], "logit_diff", "exact")
    pairs = redundant_pairs(d)
    assert len(pairs)
    phrases = split_phrases(row["text"], len(router.encode(row["text"]).ids))
    said = [_plain(w.value) for w in at.warning if "alone" in str(w.value)]
    assert len(said) == len(pairs)
    first = pairs.iloc[0]
    assert f"Deleting “{phrases[int(first['first'])].text}” alone" in said[0]
    assert f"deleting “{phrases[int(first['second'])].text}” alone; deleting both sends it to" in said[0]
