"""The Label issues page on an encoder router: the command that fine-tunes per fold, the refusal with its estimate
beyond the size limit, the baseline's button, and a cached result of its folds."""

from __future__ import annotations

import shutil

import pytest

from dashboard.data import labels as label_data
from dashboard.text import md_escape
from tests.conftest import app_test
from tests.encoder.conftest import make_small_base, write_splits
from ticketnet.labels import oof as labels_oof

PAGE = "../pages/label_issues.py"
NAME = "small-bert"


@pytest.fixture(scope="module")
def encoder_routers(tmp_path_factory):
    """A routers folder holding the small random BERT fine-tuned on 72 tickets of four teams, its splits in data/."""
    from ticketnet.encoder.finetune import EncoderRecipe, fine_tune

    base = make_small_base(tmp_path_factory.mktemp("base"))
    data = write_splits(tmp_path_factory.mktemp("splits"), sizes=(("train", 72), ("valid", 24), ("test", 24)))
    routers = tmp_path_factory.mktemp("routers")
    fine_tune(data, routers / NAME, EncoderRecipe(encoder=str(base), epochs=1, lr=1e-3, train_blocks=1,
                                                  batch_size=8, max_pieces=32), log=lambda _m: None)
    shutil.copytree(data, routers / NAME / "data")
    return routers


@pytest.fixture
def routers(encoder_routers, tmp_path, monkeypatch):
    """A fresh copy per test, so one test's cached results are not another's."""
    folder = tmp_path / "routers"
    shutil.copytree(encoder_routers, folder)
    monkeypatch.setenv("TICKETNET_ROUTERS", str(folder))
    return folder


def _page(source: str = "router"):
    at = app_test(timeout=120, router=NAME)
    at.switch_page(PAGE)
    at.session_state["labels_source"] = source
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_within_the_limit_the_page_gives_the_command_that_fine_tunes_per_fold(routers):
    at = _page()
    assert any("No out-of-fold result from the **router**" in i.value for i in at.info)
    command = next(c.value for c in at.code)
    assert f"label-issues --router {routers / NAME}" in command and "--source router" in command
    assert "--epochs" not in command                    # the card's recipe: a fine-tune needs only a few
    assert not at.warning


def test_over_the_limit_the_page_says_the_estimate_and_points_to_the_baseline(routers, monkeypatch):
    monkeypatch.setattr(labels_oof, "ENCODER_OOF_MAX", 50)
    at = _page()
    said = " ".join(w.value for w in at.warning)
    for part in ("this split has 72", "of fine-tuning", "s per ticket-epoch", "--source baseline"):
        assert md_escape(part) in said                  # Markdown-escaped, as the command line says it
    # A sentence for an analyst first (it opened with "--source router"), and the README's python in the command.
    assert said.startswith(md_escape("Out-of-fold probabilities from the router mean fine-tuning its encoder "
                                     "once per fold, done on splits of up to 50 tickets, and this split has 72"))
    assert said.endswith(md_escape(f"instead: .venv/bin/python -m ticketnet label-issues --router {routers / NAME} "
                                   f"--split train --folds {label_data.CHEAP_FOLDS} --source baseline "
                                   "--out label-issues-baseline.csv"))
    assert not at.code
    assert any("Pick the baseline above" in c.value for c in at.caption)


def test_the_baseline_button_and_a_cached_fold_result_are_shown(routers):
    from ticketnet.labels.run import compute_oof

    at = _page("baseline")
    next(b for b in at.button if b.label == "Compute the baseline's out-of-fold probabilities").click().run()
    at.run()
    assert not at.exception and not at.error
    assert (routers / NAME / "labels" / "oof-baseline-train-k3.parquet").is_file()
    assert int(at.metric[0].value) == 72
    compute_oof(routers / NAME, "train", 3, None, "router", scheduler="synchronous")
    at = _page("router")
    assert any("1 epoch per fold" in c.value and md_escape("fine-tuned") in c.value for c in at.caption)
    assert int(at.metric[0].value) == 72
    at.selectbox(key="labels_pick_id").set_value(at.selectbox(key="labels_pick_id").options[1]).run()
    assert not at.exception and not at.error
    assert not any(md.value.startswith("**Evidence**") for md in at.markdown)
