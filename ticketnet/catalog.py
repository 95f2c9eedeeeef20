"""The routers there are to open, by name: the default, the shipped encoder routers, routers/ and kept seed runs."""

from __future__ import annotations

from pathlib import Path

from ticketnet import paths

DEFAULT_ROUTER = "larkfield"          # the name of the default router (the shipped one, or $TICKETNET_ROUTER's)
SEEDS_FOLDER = "seeds"                # a seed search's kept runs inside a router folder (where `train --seeds ... --keep-all-seeds` keeps them)
CARD = "router.json"


def _router_folders(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and (p / CARD).is_file())
    except OSError:
        return []


def list_routers() -> dict[str, Path]:
    """The default router first, then the routers shipped beside it (weights/NAME/, e.g. an encoder router), then
    every folder under routers/ (or $TICKETNET_ROUTERS) that holds a router.json, sorted by name, then each one's
    kept seed runs as NAME/seed-<k>."""
    default = paths.weights_path().parent
    found = {DEFAULT_ROUTER: default}
    seen = {default.resolve()}
    shipped = _router_folders(paths.weights_dir())
    for folder in shipped + _router_folders(paths.routers_dir()):
        if folder.name not in found and folder.resolve() not in seen:
            found[folder.name] = folder
            seen.add(folder.resolve())
    # `train --seeds ... --keep-all-seeds` keeps each seed's run in NAME/seeds/seed-<k>/: listed as NAME/seed-<k>.
    for name, folder in list(found.items()):
        for run in _router_folders(folder / SEEDS_FOLDER):
            found.setdefault(f"{name}/{run.name}", run)
    return found


ENCODER_WEIGHTS = "encoder.safetensors"   # an encoder router's weights file (ticketnet.encoder.card.WEIGHTS)


def weights_in(folder: Path) -> Path:
    """The file that names a router folder's weights: an encoder router's encoder.safetensors, else router.pt."""
    folder = Path(folder)
    encoder = folder / ENCODER_WEIGHTS
    return encoder if encoder.is_file() else folder / "router.pt"


def is_encoder(weights: Path) -> bool:
    return Path(weights).name == ENCODER_WEIGHTS
