"""Chart builders, pure: tables, tensors and tokens in, Altair charts out, one module per subject."""
