"""The pages on an encoder router (a small random BERT fine-tuned on four teams): they draw, and say what they show."""

from __future__ import annotations

import pytest

from tests.conftest import HEADS, INTERPRETATION, app_test
from tests.encoder.conftest import make_small_base, write_splits

VERIFICATION = "../pages/verification.py"
TICKETS = "../pages/tickets.py"


@pytest.fixture(scope="module")
def encoder_routers(tmp_path_factory, monkeypatch_module):
    from ticketnet.__main__ import main

    base = make_small_base(tmp_path_factory.mktemp("base"))
    export = write_splits(tmp_path_factory.mktemp("export"), sizes=(("all", 160),)) / "all.csv"
    routers = tmp_path_factory.mktemp("routers")
    assert main(["train", "--data", str(export), "--encoder", str(base), "--out", str(routers / "small-bert"),
                 "--epochs", "3", "--lr", "1e-3", "--train-blocks", "1", "--max-len", "48"]) == 0
    monkeypatch_module.setenv("TICKETNET_ROUTERS", str(routers))
    return routers


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _ticket(routers) -> str:
    import csv

    with open(routers / "small-bert" / "data" / "test.csv", encoding="utf-8") as f:
        return next(csv.DictReader(f))["ticket_id"]


def _open(page: str, routers, **query):
    at = app_test(timeout=120, router="small-bert", ticket=_ticket(routers), **query)
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_heads_shows_every_head_of_a_layer_by_word_then_by_piece(encoder_routers):
    at = _open(HEADS, encoder_routers)
    assert [s.value for s in at.subheader][0] == "Layer 1: its 4 heads"
    assert at.segmented_control(key="heads_level").value == "words"
    words = at.selectbox(key=next(k for k in (w.key for w in at.selectbox) if k.endswith("_words"))).options
    assert words[0] == "0 · [CLS]" and words[-1].endswith("[SEP]")
    assert any("parity with transformers on the Verification page" in str(m.value) for m in at.markdown)
    at.segmented_control(key="block").set_value(2).run()
    assert [s.value for s in at.subheader][0] == "Layer 2: its 4 heads"
    at.segmented_control(key="heads_level").set_value("pieces").run()
    assert not at.exception
    pieces = at.selectbox(key=next(k for k in (w.key for w in at.selectbox) if k.endswith("_pieces"))).options
    assert len(pieces) >= len(words)
    assert at.query_params["level"] in ("pieces", ["pieces"]) and at.query_params["block"] in ("2", ["2"])


def test_pages_that_end_early_still_show_the_picked_ticket_in_the_sidebar(encoder_routers):
    for page in (HEADS, INTERPRETATION, VERIFICATION):
        at = _open(page, encoder_routers)
        assert "PICKED TICKET" in [c.value for c in at.sidebar.caption], page
        assert _ticket(encoder_routers).replace("-", "\\-") in " ".join(m.value for m in at.sidebar.markdown), page


def test_a_link_to_a_layer_the_router_lacks_is_refused(encoder_routers):
    at = _open(HEADS, encoder_routers, block="9")
    assert any("block='9'" in w.value for w in at.warning)
    assert [s.value for s in at.subheader][0] == "Layer 1: its 4 heads"


def test_verification_checks_the_encoder_against_transformers(encoder_routers):
    at = _open(VERIFICATION, encoder_routers)
    assert "The encoder router on" in [s.value for s in at.subheader][1]
    verdicts = [s.value for s in at.success]
    assert len(verdicts) == 2 and all(" of " in v and "checks pass" in v for v in verdicts)
    n_pass, n_all = (int(x) for x in verdicts[1].split()[0:3:2])
    assert n_pass == n_all == 2 * (2 + 2 * 2)             # one ticket, then padded: embed, logits, 2 layers × 2


def test_interpretation_sets_removal_beside_attention_by_word(encoder_routers):
    at = _open(INTERPRETATION, encoder_routers)
    assert [s.value for s in at.subheader] == ["What mattered, word by word", "Agreement with removal",
                                               "Faithfulness: ERASER by word", "Evidence recovery"]
    labels = [m.label for m in at.metric]
    assert {"τ, rollout vs removal", "τ, last layer vs removal", "τ, gradients vs removal",
            "ρ, rollout vs removal"} <= set(labels)
    table = at.dataframe[0].value
    assert list(table.columns) == ["word", "removed", "replaced", "rollout", "last layer", "integrated gradients"]
    assert "[CLS]" not in " ".join(table["word"]) and table["word"][0].startswith("0:")
    specials = next(c.value for c in at.caption if "[CLS] and [SEP] hold" in c.value)
    share = float(specials.split("[CLS] and [SEP] hold ")[1].split(" %")[0]) / 100
    assert abs(table["rollout"].sum() + share - 1) < 0.01            # the words' shares and the specials' make 1
    assert "Removing “" in at.markdown[[m.value.startswith("Removing") for m in at.markdown].index(True)].value
    gap = next(c.value for c in at.caption if c.value.startswith("Integrated gradients of p("))
    assert " add up to " in gap and " steps." in gap
    agreement, aopc = at.dataframe[1].value, at.dataframe[2].value
    assert "random" in set(agreement["signal"]) and "removal" not in set(agreement["signal"])
    assert {"removal", "rollout", "integrated gradients", "random"} <= set(aopc["signal"])
    # Phrase signals on: the phrase table, its Shapley values adding up, and the phrase rows in ERASER.
    at.segmented_control(key="phrase_signals").set_value("on").run()
    assert not at.exception, [e.message for e in at.exception]
    assert "Phrases: deletion and Shapley values" in [s.value for s in at.subheader]
    phrases = at.dataframe[-1].value
    total = next(c.value for c in at.caption if c.value.startswith("The Shapley values add up to"))
    assert list(phrases.columns) == ["phrase", "shapley value", "deletion support"]
    assert float(total.split("add up to ")[1].split(" ")[0].replace("−", "-")) == pytest.approx(
        phrases["shapley value"].sum(), rel=2e-3)
    assert "phrase shapley" in set(at.dataframe[2].value["signal"])


def test_tickets_lists_the_router_and_its_stored_predictions(encoder_routers):
    at = _open(TICKETS, encoder_routers)
    assert "Model quality" in [s.value for s in at.subheader]


def test_compare_sets_the_shipped_encoder_beside_the_tiny_router():
    import pandas as pd

    from ticketnet.paths import weights_dir

    a = pd.read_parquet(weights_dir() / "predictions" / "test.parquet")
    b = pd.read_parquet(weights_dir() / "larkfield-minilm" / "predictions" / "test.parquet")
    both = a.merge(b, on="ticket_id")
    flip = both.loc[both["predicted_x"] != both["predicted_y"], "ticket_id"].iloc[0]
    at = app_test(timeout=180, a="larkfield", b="larkfield-minilm", split="test", ticket=flip)
    at.switch_page("../pages/compare.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert [h.value for h in at.header] == ["Flips", f"{flip.replace('-', chr(92) + '-')} side by side",
                                             "Per head, across the split"]
    infos = " ".join(i.value for i in at.info)
    assert "McNemar" in infos and "reads the ticket as pieces" in infos
    assert any("different shapes" in c.value and "6 block" in c.value for c in at.caption)


def test_formula_works_an_encoder_head_through_on_its_pieces(encoder_routers):
    at = _open("../pages/formula.py", encoder_routers)
    at.segmented_control(key="formula_section").set_value("Your ticket's head").run()
    assert not at.exception, [e.message for e in at.exception]
    values = {m.label: m.value for m in at.metric}
    assert values["d_k"] == "8" and float(values["|here − the router|, whole head"]) < 1e-5
    table = at.dataframe[0].value
    assert table["key"].iloc[0] == "0 · [CLS]" and table["key"].iloc[-1].endswith("[SEP]")
    assert (table["weight"] - table["router's weight"]).abs().max() < 1e-6
    assert any("this router normalises after attention" in c.value for c in at.caption)
