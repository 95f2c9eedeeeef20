"""The predictions kept beside the weights: equal to routing now, tied to exactly their weights and data."""

from __future__ import annotations

import json
import shutil

import pytest

from ticketnet import predictions
from ticketnet.data.tickets import load_split
from ticketnet.paths import DATA, WEIGHTS


def _copy_router(src, dst):
    dst.mkdir()
    for p in predictions.weights_files(src):
        shutil.copy(p, dst / p.name)
    return dst / src.name


@pytest.mark.parametrize("split", predictions.SPLITS)
def test_the_shipped_predictions_are_this_router_s_on_this_data(router, split):
    # Shipped for the shipped weights and data, so a fresh machine's first page draws without the model; a mismatch
    # would not show stale numbers (they would be ignored), but the first start would route again.
    csv = DATA / f"{split}.csv"
    if router.meta.get("data_sha256", {}).get(split) is None or not csv.is_file():
        pytest.skip(f"no shipped {split} split")
    assert predictions.has_predictions(WEIGHTS, split, csv), "run `python -m ticketnet predictions`"
    shipped = predictions.read_predictions(WEIGHTS, split, csv)
    fresh = predictions.routed_table(router, load_split(csv))
    assert list(shipped.columns) == list(fresh.columns)
    assert shipped["ticket_id"].tolist() == fresh["ticket_id"].tolist()
    assert shipped["predicted"].tolist() == fresh["predicted"].tolist()
    teams = [c for c in fresh.columns if c.startswith("p_")]
    # Both rounded to 4 decimals: at most one rounding step apart, which the float subtraction can overshoot by an ulp.
    assert (shipped[teams] - fresh[teams]).abs().max().max() <= 1e-4 + 1e-12
    assert shipped["correct"].mean() == pytest.approx(router.meta["metrics"].get(split, {}).get(
        "accuracy", shipped["correct"].mean()), abs=1e-9)


def test_written_predictions_are_read_back_only_for_their_weights_and_data(router, artifacts, tmp_path):
    weights = _copy_router(artifacts.weights, tmp_path / "w")
    data = tmp_path / "d"
    data.mkdir()
    rows = load_split(artifacts.data / "valid.csv")[:30]
    (data / "valid.csv").write_text(
        "ticket_id,text,team\n" + "".join(f'{r["ticket_id"]},"{r["text"]}",{r["team"]}\n' for r in rows),
        encoding="utf-8")
    manifest = predictions.write_predictions(router, weights, data)
    assert list(manifest["splits"]) == ["valid"]                   # test and handwritten are absent: skipped
    table = predictions.read_predictions(weights, "valid", data / "valid.csv")
    assert table["ticket_id"].tolist() == [r["ticket_id"] for r in rows]
    probs = router.predict_texts([r["text"] for r in rows])
    assert table[[f"p_{t}" for t in router.teams]].to_numpy() == pytest.approx(probs.double().numpy(), abs=5e-5)
    assert table["predicted"].tolist() == [router.teams[i] for i in probs.argmax(1).tolist()]

    with open(data / "valid.csv", "a", encoding="utf-8") as f:     # other data: absent, never stale
        f.write('T-new,"where is my parcel",delivery\n')
    assert predictions.read_predictions(weights, "valid", data / "valid.csv") is None
    assert not predictions.has_predictions(weights, "valid", data / "valid.csv")


def test_other_weights_or_broken_files_read_as_absent(router, artifacts, tmp_path):
    weights = _copy_router(artifacts.weights, tmp_path / "w")
    predictions.write_predictions(router, weights, artifacts.data, splits=("valid",))
    csv = artifacts.data / "valid.csv"
    assert predictions.has_predictions(weights, "valid", csv)
    folder = weights.parent / predictions.FOLDER

    (folder / "valid.parquet").write_bytes(b"PAR1 not really")
    assert predictions.has_predictions(weights, "valid", csv)      # the manifest still matches...
    assert predictions.read_predictions(weights, "valid", csv) is None   # ...but the table cannot be read
    assert predictions.read_predictions(weights, "test", artifacts.data / "test.csv") is None   # never written

    (folder / predictions.MANIFEST).write_text("{not json", encoding="utf-8")
    assert not predictions.has_predictions(weights, "valid", csv)

    predictions.write_predictions(router, weights, artifacts.data, splits=("valid",))
    card = json.loads((weights.parent / "router.json").read_text(encoding="utf-8"))
    card["ood"]["min_confidence"] = 0.5                            # another router card: other weights
    (weights.parent / "router.json").write_text(json.dumps(card), encoding="utf-8")
    assert predictions.read_predictions(weights, "valid", csv) is None
