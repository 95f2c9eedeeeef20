"""`routers`: the routers the dashboard would list, with their kind, teams and validation accuracy."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def router_rows() -> list[dict]:
    """One row per router the dashboard lists: the default first, then routers/ (or $TICKETNET_ROUTERS), by name,
    then each one's kept seed runs."""
    from ticketnet.catalog import list_routers

    rows = []
    for name, folder in list_routers().items():
        rows.append({"name": name, **_describe(folder)})
    return rows


def _describe(folder: Path) -> dict:
    card = folder / "router.json"
    kind, teams, valid = "tiny", [], None
    try:
        meta = json.loads(card.read_text(encoding="utf-8"))
        kind = "encoder" if meta.get("kind") == "encoder" else "tiny"
        teams = list(meta.get("teams", []))
        valid = meta.get("metrics", {}).get("valid", {}).get("accuracy")
    except (OSError, ValueError, AttributeError):
        pass
    return {"kind": kind, "path": str(folder), "teams": teams,
            "valid_accuracy": None if valid is None else round(float(valid), 4)}


def _routers(args: argparse.Namespace) -> int:
    rows = router_rows()
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        valid = "–" if r["valid_accuracy"] is None else f"{r['valid_accuracy']:.4f}"
        print(f"{r['name']:<{width}}  {r['kind']:<7}  valid {valid}  {len(r['teams'])} teams  {r['path']}")
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("routers", help="list the routers the dashboard would show (--json for a list of objects)")
    p.add_argument("--json", action="store_true", help="print a JSON list of {name, kind, path, teams, "
                                                       "valid_accuracy}")
    p.set_defaults(func=_routers)
