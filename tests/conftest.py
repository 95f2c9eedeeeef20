"""Shared fixtures: the repository's paths and the router/data the dashboard tests run against."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]


# -- on-demand tests: the markers named by pytest.ini's `on_demand_markers` are skipped unless `-m` names them ---------
def pytest_addoption(parser):
    parser.addini("on_demand_markers", type="args", default=[],
                  help="markers of tests that run only when `-m` names them (minutes-long, run on demand)")


def pytest_collection_modifyitems(config, items):
    import re

    wanted = set(re.findall(r"[A-Za-z_]\w*", config.option.markexpr or ""))
    skips = {name: pytest.mark.skip(reason=f"on demand: run with `pytest -m {name}`")
             for name in config.getini("on_demand_markers") if name not in wanted}
    for item in items:
        for name in (m.name for m in item.iter_markers()):
            if name in skips:
                item.add_marker(skips[name])
                break
APP = ROOT / "dashboard" / "app.py"
DEFAULT_TICKET = "T-65052"
HEADS = "../pages/heads.py"                  # AppTest names pages relative to the entry script, dashboard/app.py
INTERPRETATION = "../pages/interpretation.py"


def app_test(timeout: float = 90, **query):
    """An AppTest of the whole dashboard (entry script and navigation), with `query` as the URL's parameters."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.query_params.update(query)
    return at


class KeywordModel(nn.Module):
    """Logits depend only on whether token id 7 is among the real tokens: team 0 gets +3 when it is."""

    def __init__(self):
        super().__init__()
        self.config = SimpleNamespace(n_classes=5)
        self.calls = 0

    def forward(self, ids, is_pad=None):
        self.calls += 1
        is_pad = ids.eq(0) if is_pad is None else is_pad
        present = (ids.eq(7) & ~is_pad).any(dim=1).float()            # (B,)
        logits = torch.zeros(ids.shape[0], 5)
        logits[:, 0] = 3.0 * present
        return logits


P_WITH = math.exp(3) / (math.exp(3) + 4)                               # KeywordModel's p(team 0) with token 7
P_WITHOUT = 0.2                                                        # without it: all logits equal
TICKET = torch.tensor([3, 4, 7, 5, 6, 8, 9, 2, 3, 4])                 # token 7 at position 2


def make_model(seed: int = 0, vocab: int = 50, d: int = 16, h: int = 4, d_ff: int = 32, max_len: int = 64,
               n_classes: int = 5, head_scale: float = 1.0, peaky: float = 1.0):
    """A small random TinyTransformer in eval mode, the same for the same arguments.

    `head_scale` spreads the logits (a fresh head gives near-uniform probabilities); `peaky` sharpens block 1's
    attention by scaling its query weights.
    """
    from ticketnet import TinyConfig, TinyTransformer

    torch.manual_seed(seed)
    model = TinyTransformer(TinyConfig(vocab, d=d, h=h, n_blocks=2, d_ff=d_ff, max_len=max_len,
                                       n_classes=n_classes, dropout=0.0))
    with torch.no_grad():
        model.head.weight.mul_(head_scale)
        model.blocks.layers[0].self_attn.in_proj_weight[:d].mul_(peaky)
    return model.eval()


def make_router(seed: int = 0, **model_args):
    """A Router over `make_model` with the words w0, w1, ... after <pad> and <unk>."""
    from ticketnet import Router, Vocab

    model = make_model(seed, **model_args)
    words = [f"w{i}" for i in range(model.config.vocab_size - 2)]
    return Router(model, Vocab(itos=["<pad>", "<unk>", *words]), make_teams(model.config.n_classes))


def without_policy(folder: Path) -> Path:
    """A copied router folder with its stored routing policy taken out of router.json (the shipped router stores
    one): the card as it was before `policy` stored it, for the tests of a router that has none."""
    import json

    from ticketnet.card import POLICY_KEY, card_json_bytes

    card = folder / "router.json"
    meta = json.loads(card.read_text(encoding="utf-8"))
    meta.pop(POLICY_KEY, None)
    card.write_bytes(card_json_bytes(meta))
    return folder


def make_teams(n: int) -> tuple[str, ...]:
    """Larkfield's teams for a five-way model, else team0, team1, ..."""
    from ticketnet.data.synth import TEAMS

    return TEAMS if n == len(TEAMS) else tuple(f"team{i}" for i in range(n))


@dataclass(frozen=True)
class Artifacts:
    weights: Path          # router.pt (vocab.json and router.json beside it)
    data: Path             # folder with train.csv, valid.csv, test.csv
    shipped: bool          # True when these are the repository's own weights/ and data/


def _artifacts() -> Artifacts:
    env_w, env_d = os.environ.get("TICKETNET_WEIGHTS", "").strip(), os.environ.get("TICKETNET_DATA", "").strip()
    weights = Path(env_w) if env_w else ROOT / "weights" / "router.pt"
    data = Path(env_d) if env_d else ROOT / "data"
    return Artifacts(weights, data, shipped=not env_w and not env_d)


@pytest.fixture(autouse=True)
def main_module_kept():
    """An AppTest run makes its script the process's __main__ and leaves it there; a process spawned later (an
    interpretation worker, a Dask nanny) runs __main__ again, and a script written by AppTest.from_function dies
    in it (NameError: __args). Each test leaves __main__ as it found it."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own empty $TICKETNET_CACHE: split results stored on disk by one test (or by a dashboard
    run on this machine) never turn up in another, and nothing is written to ~/.cache."""
    folder = tmp_path_factory.mktemp("ticketnet_cache")
    monkeypatch.setenv("TICKETNET_CACHE", str(folder))
    return folder


@pytest.fixture(scope="session")
def artifacts() -> Artifacts:
    """The router and splits to test against ($TICKETNET_WEIGHTS / $TICKETNET_DATA, else the shipped ones).

    Missing files skip the test with the command that makes them, except under CI, where they fail it.
    """
    a = _artifacts()
    need = [a.weights, a.weights.parent / "vocab.json", a.weights.parent / "router.json",
            *(a.data / f"{s}.csv" for s in ("train", "valid", "test"))]
    missing = [str(p) for p in need if not p.is_file()]
    if missing:
        message = (f"router or data missing ({', '.join(missing)}); make them with `python -m ticketnet synth` "
                   "and `python -m ticketnet train`")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return a


@pytest.fixture(scope="session")
def router(artifacts):
    from ticketnet import Router

    return Router.load(artifacts.weights)


@pytest.fixture(scope="session")
def valid_rows(artifacts) -> list[dict]:
    from ticketnet import load_split

    return load_split(artifacts.data / "valid.csv")


@pytest.fixture
def app_env(artifacts, monkeypatch):
    """Environment for an in-process AppTest of the dashboard, pointed at `artifacts`."""
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(artifacts.weights))
    monkeypatch.setenv("TICKETNET_DATA", str(artifacts.data))
    return artifacts


@pytest.fixture
def small_data(artifacts, tmp_path, monkeypatch):
    """A data folder with the first 40 tickets of each split (the default ticket kept in valid), so split-wide
    computations finish in seconds; the environment points the dashboard at it and at `artifacts`' router."""
    import csv

    from ticketnet import load_split

    for split in ("train", "valid", "test"):
        rows = load_split(artifacts.data / f"{split}.csv")
        keep = rows[:40]
        if split == "valid" and not any(r["ticket_id"] == DEFAULT_TICKET for r in keep):
            keep = keep[:39] + [r for r in rows if r["ticket_id"] == DEFAULT_TICKET]
        with open(tmp_path / f"{split}.csv", "w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(keep)
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(artifacts.weights))
    monkeypatch.setenv("TICKETNET_DATA", str(tmp_path))
    return tmp_path


# -- the corpus scan: the first valid tickets as a CSV, scanned in-process once (tests/corpus and the Corpus page) ----
@pytest.fixture(scope="session")
def corpus_csv(valid_rows, tmp_path_factory) -> Path:
    from tests.corpus.conftest import N_TICKETS, write_csv

    return write_csv(tmp_path_factory.mktemp("corpus_input") / "tickets.csv", valid_rows[:N_TICKETS])


@pytest.fixture(scope="session")
def full_scan(corpus_csv, artifacts, tmp_path_factory) -> Path:
    """A full-level scan of the CSV with dask's synchronous scheduler, three partitions."""
    from tests.corpus.conftest import PARTITION, sync_scan

    out = tmp_path_factory.mktemp("corpus_scan") / "scan"
    sync_scan(corpus_csv, out, artifacts.weights, "full", PARTITION)
    return out


KEYWORD_ID = 7                                                         # keyword_transformer's one helpful token


def keyword_transformer(vocab: int = 12, max_len: int = 16):
    """A hand-built TinyTransformer (d=4, 2 heads, 2 blocks) in which only token KEYWORD_ID helps team 0.

    Every position embedding is p = (1, −1, 0, 0); the keyword's embedding is u = (0, 0, 1, −1), every other token's
    (<unk> included) 0. Block 1 head 1 reads evenly over all keys (queries and keys 0) and its value picks the
    u-component, written back along u; every other head, both feed-forwards and all biases are 0. Team 0's logit
    reads the u-component of the pooled vector, the other teams' logits are 0. So the keyword, every edge of block 1
    head 1 into it and that head itself help team 0; any other token, read as <unk> or not, adds nothing but dilutes
    the keyword in the mean pooling, so deleting it helps team 0 a little.
    """
    from ticketnet import TinyConfig, TinyTransformer

    model = TinyTransformer(TinyConfig(vocab, d=4, h=2, n_blocks=2, d_ff=4, max_len=max_len, n_classes=3,
                                       dropout=0.0))
    u = torch.tensor([0.0, 0.0, 1.0, -1.0])
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        for layer in model.blocks.layers:
            for norm in (layer.norm1, layer.norm2):
                norm.weight.fill_(1.0)
        model.norm.weight.fill_(1.0)
        model.position.weight[:] = torch.tensor([1.0, -1.0, 0.0, 0.0])
        model.embed.weight[KEYWORD_ID] = u
        attn = model.blocks.layers[0].self_attn
        attn.in_proj_weight[8] = u                                     # V of head 1 (rows 8, 9): the u-component
        attn.out_proj.weight[:, 0] = 2.0 * u                           # ... written back along u
        model.head.weight[0] = u
    return model.eval()


# Team names a support team might really use, and some that break naive code: markup, dots and colons (field paths
# in Vega-Lite), quotes, brackets, non-Latin scripts, a long one.
ODD_TEAMS = ("Billing & Refunds", "tier-2", "réseau", "网络", "<b>bold</b>", "team.with.dots", "a:b", 'Quote "q"',
             "[brackets]", "Escalations desk for very long team names", "x", "Network / VPN")


def write_other_export(path: Path, teams: tuple[str, ...], per_team: int, seed: int = 11) -> Path:
    """An export (id, subject, body, queue) of Larkfield-generated texts under other team names: each of Larkfield's
    five teams is spread over len(teams) / 5 of them by the ticket's pattern, so the teams are partly learnable."""
    import pandas as pd

    from ticketnet.data.synth import TEAMS, generate

    rows = generate(seed, (per_team * len(teams) * 3, 10, 10))["train"]
    by_team: dict[str, list[dict]] = {t: [] for t in teams}
    patterns = sorted({r["pattern"] for r in rows})
    for r in rows:
        k = (TEAMS.index(r["team"]) + len(TEAMS) * patterns.index(r["pattern"])) % len(teams)
        if len(by_team[teams[k]]) < per_team:
            by_team[teams[k]].append({"id": r["ticket_id"], "subject": r["text"].split(".")[0], "body": r["text"],
                                      "queue": teams[k]})
    pd.DataFrame([r for t in teams for r in by_team[t]]).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def other_routers(tmp_path_factory) -> Path:
    """A routers folder holding `helpdesk` (4 teams, 1 block of 4 heads) and `ops` (12 odd team names, 2 blocks
    of 2 heads), each trained for two epochs on an export: what the dashboard must show as well as Larkfield's."""
    from ticketnet.data.export import ExportColumns
    from ticketnet.train import train_export
    from ticketnet.training import TrainConfig

    root = tmp_path_factory.mktemp("routers")
    columns = ExportColumns(("subject", "body"), "queue", "id", id_given=True)
    for name, teams, shape in (("helpdesk", ODD_TEAMS[:4], {"d": 32, "heads": 4, "blocks": 1}),
                               ("ops", ODD_TEAMS, {"d": 32, "heads": 2, "blocks": 2})):
        export = write_other_export(root.parent / f"{name}.csv", teams, 30)
        train_export(export, root / name, columns, cfg=TrainConfig(epochs=2, seed=5, d_ff=64, **shape),
                     log=lambda _m: None)
    return root


@pytest.fixture
def routers_env(app_env, other_routers, monkeypatch, tmp_path) -> Path:
    """The dashboard's environment (`app_env`) with the `other_routers` listed in its sidebar and an empty scans
    folder; returns the routers folder."""
    monkeypatch.setenv("TICKETNET_ROUTERS", str(other_routers))
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    return other_routers


@pytest.fixture(scope="session")
def larkfield_retrain(artifacts, tmp_path_factory) -> Path:
    """A second router on Larkfield's teams and splits, of the shipped shape, trained for four epochs on the first
    3,000 training tickets (0.60 test accuracy against the shipped 0.94, about 45 s with its baseline): a weaker retrain
    to set beside the shipped router."""
    import shutil

    from ticketnet.train import train
    from ticketnet.training import TrainConfig

    data = tmp_path_factory.mktemp("larkfield_data")
    lines = (artifacts.data / "train.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "train.csv").write_text("".join(lines[:3001]), encoding="utf-8")
    for name in ("valid.csv", "test.csv", "handwritten.csv", "handwritten_dev.csv", "teams.txt"):
        shutil.copy(artifacts.data / name, data / name)
    out = tmp_path_factory.mktemp("routers") / "retrain"
    train(data, out, TrainConfig(epochs=4, seed=3, recipe="large"), log=lambda _m: None)
    return out
