"""What several commands share: the router a command reads, seed lists, JSON reports, intervals."""

from __future__ import annotations

import argparse
from pathlib import Path

ROUTER_HELP = "a router folder (default: $TICKETNET_ROUTER, else the shipped weights/)"


def router_weights(args: argparse.Namespace) -> Path:
    """The weights file a command reads (router.pt, or an encoder router's): --router DIR, else --weights FILE, else
    $TICKETNET_ROUTER / the shipped one."""
    from ticketnet.catalog import weights_in
    from ticketnet.paths import weights_path

    if getattr(args, "router", None):
        folder = Path(args.router)
        if not folder.is_dir():
            raise ValueError(f"--router {folder}: not a folder (a router folder holds router.pt, vocab.json, "
                             f"router.json; an encoder router's, encoder.safetensors, tokenizer.json, router.json)")
        return weights_in(folder)
    return Path(args.weights) if getattr(args, "weights", None) else weights_path()


DEFAULT_SPLIT = "0.8,0.1,0.1"


def seed_list(text: str) -> list[int]:
    """`0-4` or `0,3,7` as a list of distinct seeds, for argparse."""
    try:
        if "-" in text.strip("-"):
            a, b = (int(x) for x in text.split("-", 1))
            seeds = list(range(a, b + 1))
        else:
            seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seed range (0-4) or list (0,3,7)") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"{text!r} names no seed or the same seed twice")
    return seeds


def write_json(path: str, result: dict) -> None:
    import json

    from ticketnet._runtime.atomic import write_atomic

    write_atomic(Path(path), (json.dumps(result, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    print(f"written to {path}")


def interval(stat: dict, fmt: str = ".3f") -> str:
    if stat["value"] is None:
        return "–"
    if stat["low"] is None:
        return f"{stat['value']:{fmt}}"
    return f"{stat['value']:{fmt}} ({stat['low']:{fmt}}–{stat['high']:{fmt}})"
