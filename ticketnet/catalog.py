"""The routers there are to open, by name: the default, the shipped encoder routers, routers/ and kept seed runs."""

from __future__ import annotations

from pathlib import Path

from ticketnet import paths

DEFAULT_ROUTER = "larkfield"          # the name of the default router (the shipped one, or $TICKETNET_ROUTER's)
SEEDS_FOLDER = "seeds"                # a seed search's kept runs inside a router folder (where `train --seeds ... --keep-all-seeds` keeps them)
CARD = "router.json"
ENCODER_WEIGHTS = "encoder.safetensors"   # a fine-tuned encoder router's weights (ticketnet.encoder.card.WEIGHTS)
CLASSIFIER_WEIGHTS = "model.safetensors"  # a team's Hugging Face classifier, opened as it was saved


def is_router_folder(folder: Path) -> bool:
    """A router folder: one with a router.json, or a team's classifier saved with save_pretrained (config.json beside
    model.safetensors)."""
    return (folder / CARD).is_file() or ((folder / "config.json").is_file() and (folder / CLASSIFIER_WEIGHTS).is_file())


def _router_folders(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and is_router_folder(p))
    except OSError:
        return []


def list_routers() -> dict[str, Path]:
    """The default router first, then the routers shipped beside it (weights/NAME/, e.g. an encoder router; only while
    the default is the shipped one), then
    every router folder under routers/ (or $TICKETNET_ROUTERS; `is_router_folder`), sorted by name, then each one's
    kept seed runs as NAME/seed-<k>."""
    default = paths.weights_path().parent
    found = {DEFAULT_ROUTER: default}
    seen = {default.resolve()}
    # The routers shipped beside Larkfield's belong to its demo: listed while the default router is the shipped one.
    shipped = _router_folders(paths.weights_dir()) if default.resolve() == paths.weights_dir().resolve() else []
    for folder in shipped + _router_folders(paths.routers_dir()):
        if folder.name not in found and folder.resolve() not in seen:
            found[folder.name] = folder
            seen.add(folder.resolve())
    # `train --seeds ... --keep-all-seeds` keeps each seed's run in NAME/seeds/seed-<k>/: listed as NAME/seed-<k>.
    for name, folder in list(found.items()):
        for run in _router_folders(folder / SEEDS_FOLDER):
            found.setdefault(f"{name}/{run.name}", run)
    return found


def weights_in(folder: Path) -> Path:
    """The file that names a router folder's weights: a fine-tuned encoder router's encoder.safetensors, a team's
    classifier's model.safetensors (beside its config.json, no router.json), else router.pt."""
    folder = Path(folder)
    if (folder / ENCODER_WEIGHTS).is_file():
        return folder / ENCODER_WEIGHTS
    if not (folder / CARD).is_file() and (folder / "config.json").is_file() and (folder / CLASSIFIER_WEIGHTS).is_file():
        return folder / CLASSIFIER_WEIGHTS
    return folder / "router.pt"


def is_encoder(weights: Path) -> bool:
    return Path(weights).name in (ENCODER_WEIGHTS, CLASSIFIER_WEIGHTS)
