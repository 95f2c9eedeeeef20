"""The from-scratch encoder against transformers' own eager forward: logits, every layer's attention and hidden states."""

from __future__ import annotations

import torch
from torch import Tensor

from ticketnet.encoder.files import EncoderFolder, set_offline
from ticketnet.encoder.model import EncoderModel, run_with_cache
from ticketnet.lens.parity import ParityRow

# torch.testing's float32 rule, |ours − theirs| ≤ ATOL + RTOL·|theirs|, taken at the largest reference value of
# each compared tensor: hidden states grow well past 1 after a LayerNorm's gain, and rounding grows with them, so a
# flat ATOL can fail a long ticket by rounding alone (docs/encoder.md, "The from-scratch copy and its parity").
ATOL, RTOL = 1e-5, 1.3e-6
TOLERANCE = ATOL   # the floor, for a tensor whose values stay under 1 (attention probabilities)


def reference_model(folder: EncoderFolder):
    """transformers' own model of the folder with eager attention (a base model where the router pools by mean)."""
    set_offline()
    from transformers import AutoModel, AutoModelForSequenceClassification
    from transformers.utils import logging

    logging.disable_progress_bar()                   # its bar would print to the server's or the suite's stderr

    cls = AutoModelForSequenceClassification if folder.classifier else AutoModel
    model = cls.from_pretrained(str(folder.path), local_files_only=True, trust_remote_code=False,
                                attn_implementation="eager", use_safetensors=True)
    return model.eval()


@torch.no_grad()
def compared(model: EncoderModel, reference, ids: Tensor, is_pad: Tensor,
             token_types: Tensor | None = None) -> dict[str, tuple[float, float]]:
    """name -> (largest |from-scratch − transformers| over the real tokens, the tolerance for it), per layer's
    attention and hidden state and on the logits (for a mean-pooled router, transformers' last hidden state pooled
    and classified by the router's head)."""
    logits, cache = run_with_cache(model, ids, is_pad, token_types)
    kwargs = {"attention_mask": (~is_pad).long(), "output_attentions": True, "output_hidden_states": True}
    if token_types is not None and model.config.type_vocab_size:
        kwargs["token_type_ids"] = token_types
    out = reference(input_ids=ids, **kwargs)
    real = ~is_pad                                                            # (B, n)

    def pair(ours: Tensor, theirs: Tensor, rows: Tensor | None, reduce) -> tuple[float, float]:
        diff, size = reduce((ours - theirs).abs()), reduce(theirs.abs())
        if rows is not None:
            diff, size = diff[rows], size[rows]
        return diff.max().item(), ATOL + RTOL * size.max().item()

    per_token = lambda t: t.amax(-1)                                          # noqa: E731  (B, n)
    per_query = lambda t: t.amax(dim=(1, 3))                                  # noqa: E731  (B, n)
    out_map = {"embed": pair(cache["embed"], out.hidden_states[0], real, per_token)}
    for i in range(model.config.n_blocks):
        out_map[f"blocks.{i}.attn.pattern"] = pair(cache[f"blocks.{i}.attn.pattern"], out.attentions[i], real,
                                                   per_query)
        out_map[f"blocks.{i}.resid_post"] = pair(cache[f"blocks.{i}.resid_post"], out.hidden_states[i + 1], real,
                                                 per_token)
    theirs = out.logits if hasattr(out, "logits") else model.head(out.last_hidden_state, is_pad)
    out_map["logits"] = pair(logits, theirs, None, lambda t: t)
    return out_map


def differences(model: EncoderModel, reference, ids: Tensor, is_pad: Tensor,
                token_types: Tensor | None = None) -> dict[str, float]:
    """Largest |from-scratch − transformers| per compared tensor (`compared` without the tolerances)."""
    return {name: diff for name, (diff, _) in compared(model, reference, ids, is_pad, token_types).items()}


def parity_rows(model: EncoderModel, reference, ids: Tensor, is_pad: Tensor, case: str) -> list[ParityRow]:
    return [ParityRow(f"encoder vs transformers: {name}", case, "float32", diff, tolerance)
            for name, (diff, tolerance) in compared(model, reference, ids, is_pad).items()]


def fine_tune_reference(router):
    """transformers' base model of a fine-tuned router with the router's changed tensors put back under
    transformers' own names: the reference its from-scratch forward is checked against."""
    from ticketnet.encoder import files, weights

    source, _ = files.resolve(router.meta["base"]["encoder"])
    reference = reference_model(files.read_folder(source))
    theirs = reference.state_dict()
    state = router.model.state_dict()
    # The same renaming that loaded the base, read from transformers' own names: each of its tensors -> ours.
    ours = weights.names(list(theirs), router.config, with_head=False)
    reference.load_state_dict({key: state[mine] for key, mine in ours.items()}, strict=False)
    return reference


def reference_for(router):
    """transformers' reference model of an encoder router: the team's own saved classifier, or the fine-tune's base
    with its changes put back."""
    if router.meta.get("source") == "classifier":
        from ticketnet.encoder.files import read_folder

        return reference_model(read_folder(router.meta["folder"]))
    return fine_tune_reference(router)


def ticket_rows(router, reference, texts: list[str]) -> list[ParityRow]:
    """Parity on the first ticket alone, then on all of them padded into one batch (real tokens compared)."""
    encoded = [router.encode(t) for t in texts]
    ids, is_pad = router.batch(encoded[:1])
    rows = parity_rows(router.model, reference, ids, is_pad, "one ticket")
    if len(encoded) > 1:
        ids, is_pad = router.batch(encoded)
        rows += parity_rows(router.model, reference, ids, is_pad, f"{len(encoded)} tickets, padded")
    return rows
