"""Head importance: a head that writes nothing changes nothing when masked."""

import torch

from tests.conftest import make_model
from ticketnet.interpret import head_importance
from ticketnet.nn.transformer import pad_batch


def test_masking_a_head_whose_output_projection_is_zero_changes_nothing():
    model = make_model()
    with torch.no_grad():                                              # block 1, head 2: columns 4..7 of W_O
        model.blocks.layers[0].self_attn.out_proj.weight[:, 4:8] = 0.0
    ids, is_pad = pad_batch([[3, 4, 5, 6], [7, 8, 9], [10, 11, 12, 13, 14, 15]])
    labels = torch.tensor([0, 1, 2])
    df = head_importance(model, ids, is_pad, labels)
    assert list(df.columns) == ["block", "head", "accuracy", "accuracy_drop", "support_logit_diff",
                                "support_prob"]
    assert list(zip(df["block"], df["head"])) == [(b, h) for b in (1, 2) for h in (1, 2, 3, 4)]
    dead = df[(df["block"] == 1) & (df["head"] == 2)].iloc[0]
    assert dead.accuracy_drop == 0.0 and abs(dead.support_prob) <= 1e-6
    assert df.support_prob.abs().max() > 1e-4                             # other heads do matter
    pred = head_importance(model, ids, is_pad, labels, target="predicted", batch_size=2)
    assert abs(pred[(pred["block"] == 1) & (pred["head"] == 2)].support_prob.iloc[0]) <= 1e-6


def test_head_importance_by_length_is_the_mean_of_each_ticket_s_own():
    from ticketnet.interpret.methods.heads import MEASURES, head_importance_by_length

    model = make_model(head_scale=4.0)
    gen = torch.Generator().manual_seed(1)
    ids = [torch.randint(3, 50, (int(n),), generator=gen).tolist() for n in torch.randint(2, 20, (11,), generator=gen)]
    labels = torch.randint(0, 5, (11,), generator=gen).tolist()
    steps = []
    batched = head_importance_by_length(model, ids, labels, chunk_size=4, progress=lambda d, t: steps.append((d, t)))
    alone = [head_importance(model, *pad_batch([s]), torch.tensor([y])) for s, y in zip(ids, labels, strict=True)]
    assert steps == [(4, 11), (8, 11), (11, 11)]
    assert list(batched.columns) == ["block", "head", *MEASURES]
    assert list(zip(batched["block"], batched["head"])) == list(zip(alone[0]["block"], alone[0]["head"]))
    for column in MEASURES:
        mean = sum(df[column].to_numpy() for df in alone) / len(alone)
        assert abs(batched[column].to_numpy() - mean).max() <= 1e-6, column
    assert batched["support_prob"].abs().max() > 1e-4
