"""The lesson's own code, run against the shipped router: `TinyTransformer(len(vocab))` and the block-2 copy."""

from __future__ import annotations

import torch

from ticketnet import MultiHead, TinyTransformer, Vocab, load_split
from ticketnet.paths import WEIGHTS, data_dir


def test_the_lessons_block_2_copy_runs_on_the_shipped_weights():
    # As the lesson writes it, only data_dir() and WEIGHTS point at this repository's files.
    DATA = data_dir()
    train_rows, valid_rows = (load_split(DATA / f"{s}.csv") for s in ("train", "valid"))
    vocab = Vocab([r["text"] for r in train_rows])
    tf = TinyTransformer(len(vocab))
    tf.load_state_dict(torch.load(WEIGHTS, weights_only=True))   # the course's trained model
    tf.eval()
    row = next(r for r in valid_rows if r["ticket_id"] == "T-65052")
    ids = torch.tensor([vocab.encode(row["text"])])
    tokens = [vocab.itos[i] for i in ids[0].tolist()]
    with torch.no_grad():
        h = tf.embed(ids) + tf.position(torch.arange(ids.shape[1]))
        h = tf.blocks.layers[0](h)                               # block 1 as a whole
        block = tf.blocks.layers[1]
        x = block.norm1(h)                                       # block 2 normalises before attention
        pt = block.self_attn                                     # PyTorch's layer, trained
        ours = MultiHead(64, 4)
        for lin, W, b in zip((ours.W_Q, ours.W_K, ours.W_V), pt.in_proj_weight.chunk(3), pt.in_proj_bias.chunk(3)):
            lin.weight.copy_(W)
            lin.bias.copy_(b)
        ours.W_O.weight.copy_(pt.out_proj.weight)
        ours.W_O.bias.copy_(pt.out_proj.bias)
        _, w_ours = ours(x, x)
        _, w_pt = pt(x, x, x, average_attn_weights=False)

    assert tuple(w_ours.shape) == (1, 4, 30, 30)
    assert (w_ours - w_pt).abs().max().item() < 1e-5
    assert "not" in tokens and len(tokens) == 30
    torch.testing.assert_close(w_ours.sum(-1), torch.ones(1, 4, 30))


def test_a_vocabulary_size_builds_the_shipped_routers_shape():
    tf = TinyTransformer(8021)
    assert (tf.config.d, tf.config.h, tf.config.n_blocks, tf.config.n_classes) == (64, 4, 2, 5)
    assert tf.embed.num_embeddings == 8021
