"""Routers for the Compare page's tests: pairs on one data set, another shape, disjoint teams (built once a module)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HELPDESK_SHAPE = {"d": 32, "heads": 4, "blocks": 1}


def helpdesk_routers(other_routers: Path, root: Path) -> Path:
    """A routers folder in `root`: `helpdesk` (4 teams, 1 block of 4 heads) and `ops` (12 teams, its own splits)
    copied from the `other_routers` fixture, `helpdesk_b` (helpdesk's splits and shape, another seed),
    `helpdesk_wide` (the same splits, 2 blocks of 2 heads) and `renamed` (helpdesk_b's weights under four other team
    names, on the same splits). Each trained for two epochs on the 120 tickets: seconds."""
    from ticketnet.train import train
    from ticketnet.training import TrainConfig

    for name in ("helpdesk", "ops"):
        shutil.copytree(other_routers / name, root / name)
    data = root / "helpdesk" / "data"
    for name, shape, seed in (("helpdesk_b", HELPDESK_SHAPE, 6), ("helpdesk_wide", {"d": 32, "heads": 2, "blocks": 2}, 7)):
        train(data, root / name, TrainConfig(epochs=2, seed=seed, d_ff=64, **shape), log=lambda _m: None)
        shutil.copytree(data, root / name / "data")          # a router trained on an export reads its own data/
    shutil.copytree(root / "helpdesk_b", root / "renamed")
    card = root / "renamed" / "router.json"
    meta = json.loads(card.read_text(encoding="utf-8"))
    meta["teams"] = ["zeta one", "zeta two", "zeta three", "zeta four"]
    card.write_text(json.dumps(meta), encoding="utf-8")
    return root


def larkfield_routers(larkfield_retrain: Path, root: Path) -> Path:
    """A routers folder in `root` holding the retrain as `retrain` (beside the default router, the shipped one)."""
    shutil.copytree(larkfield_retrain, root / "retrain")
    return root
