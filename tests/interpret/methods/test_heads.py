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
