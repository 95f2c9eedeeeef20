"""The encoder router's speed: predict throughput, one ticket's inspection, every word removed, memory, side by side."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import torch

from ticketnet._runtime.proc import status_kb
from ticketnet._runtime.timing import side_by_side
from ticketnet.bench.tickets import ticket_of_length

# The targets on 2 cores (docs/encoder.md): predict, inspection, removal at 40 words, memory per router.
TARGETS = {"predict_tickets_per_second": 100.0, "inspection_s": 0.3, "removal_n40_s": 0.5, "router_rss_mb": 400.0}


def _rss_mb() -> float:
    return status_kb(os.getpid(), "VmRSS") / 1024


def encoder_speed(folder: Path, valid: list[dict], test: list[dict], repeats: int = 7) -> dict:
    """Load the encoder router in `folder` (its RSS growth), then time routing the test split, one ticket's
    inspection and every word of a 40-word ticket removed and replaced, against one plain forward of the ticket."""
    from ticketnet.encoder.removal import variants, word_effects
    from ticketnet.encoder.router import EncoderRouter

    gc.collect()
    before = _rss_mb()
    t0 = time.perf_counter()
    router = EncoderRouter.load(folder)
    router.model.requires_grad_(False)
    load_s = time.perf_counter() - t0
    grew = _rss_mb() - before
    texts = [r["text"] for r in test]
    encoded = [router.encode(t) for t in texts]
    pieces = sum(len(e.ids) for e in encoded) / len(encoded)
    router.predict_encoded(encoded[:64])                                   # warm
    t0 = time.perf_counter()
    router.predict_encoded(encoded)
    predict_s = time.perf_counter() - t0
    text = ticket_of_length(valid, 40)          # 40 tokens of a real ticket, as the Tiny cases cut theirs
    ins = router.inspect(text)
    groups = ins.encoded.word_pieces
    v_ids, v_pad = variants(ins.encoded.ids, groups, "removed", None, router.config.pad_id)

    def removal_only():
        with torch.inference_mode():
            router.model(v_ids, v_pad)

    def forward_one():
        with torch.inference_mode():
            router.model(*router.batch([ins.encoded]))

    seconds = side_by_side({"inspection": lambda: router.inspect(text), "removal_n40": removal_only,
                            "word_effects_n40": lambda: word_effects(router, ins), "forward_one": forward_one},
                           repeats=repeats)
    return {
        "router": str(folder), "load_s": round(load_s, 2), "router_rss_mb": round(grew, 1),
        "test_tickets": len(texts), "mean_pieces": round(pieces, 1),
        "predict_tickets_per_second": round(len(texts) / predict_s, 1),
        "inspection_s": round(seconds["inspection"], 4), "removal_n40_s": round(seconds["removal_n40"], 4),
        "removal_n40_pieces": len(ins.encoded.ids), "removal_variants": len(groups),
        "word_effects_n40_s": round(seconds["word_effects_n40"], 4),
        "forward_one_s": round(seconds["forward_one"], 5),
        "removal_ratio_to_one_forward": round(seconds["removal_n40"] / seconds["forward_one"], 1),
        "targets": TARGETS,
    }
