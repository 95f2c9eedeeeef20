"""Word vectors from a pretrained encoder, each word read alone, to start a Tiny router's embeddings."""

# A few hundred tickets teach a rare word little; a sentence encoder already places "refund" beside
# "reimbursement". Its mean-pooled vector of the word alone ([CLS] word [SEP]), projected on the first d principal
# components over the router's vocabulary, starts that word's embedding at the recipe's scale; training moves it
# from there. The router still reads words, and a word outside its vocabulary is still <unk>.

from __future__ import annotations

import time
from collections.abc import Sequence

import torch

from ticketnet.encoder import files


class EncoderWordVectors:
    """`vectors(words, d, scale)` from the encoder `encoder` names (minilm: the pinned all-MiniLM-L6-v2, or a
    folder); `record` is what a router's card keeps of them."""

    def __init__(self, encoder: str = files.MINILM, batch_size: int = 256) -> None:
        from ticketnet.encoder.finetune import EncoderRecipe, base_of

        self.encoder, self.batch_size = encoder, batch_size
        _, base = base_of(EncoderRecipe(encoder=encoder))        # checks the files and their pins now
        self.seconds = 0.0
        self.record = {"encoder": encoder, "name": base.get("name"), "pins": base.get("pins"),
                       "method": "mean-pooled vector of each word read alone, first d principal components"}

    def __call__(self, words: Sequence[str], d: int, scale: float) -> torch.Tensor:
        """(len(words), d), every coordinate at standard deviation `scale` over the words."""
        from ticketnet.encoder.finetune import EncoderRecipe, start_router

        if len(words) < 2:
            raise ValueError("word vectors need at least two words to find their principal components")
        start = time.perf_counter()
        router, _, _ = start_router(EncoderRecipe(encoder=self.encoder), ("a", "b"))
        router.model.eval()
        with torch.inference_mode():
            vecs = torch.cat([router.pooled([router.encode(w) for w in words[i : i + self.batch_size]])
                              for i in range(0, len(words), self.batch_size)]).float()     # (words, hidden)
        vecs = (vecs - vecs.mean(0)).double()
        q = min(d, *vecs.shape)
        # An exact SVD, not a randomised one: the same words give the same vectors, run after run; each component's
        # sign is fixed by its largest loading.
        _, _, vh = torch.linalg.svd(vecs, full_matrices=False)                             # (k, hidden)
        v = vh[:q].T                                                                       # (hidden, q)
        v = v * v.gather(0, v.abs().argmax(0, keepdim=True)).sign()
        out = torch.zeros(len(words), d)
        out[:, :q] = (vecs @ v).float()                                                    # (words, q)
        self.seconds = round(time.perf_counter() - start, 1)
        return out * (scale / out[:, :q].std())
