"""Token-score methods: deletion and <unk> replacement, received attention and rollout, gradients, head masking."""
