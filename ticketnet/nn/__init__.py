"""The model and its attention: from-scratch attention and MultiHead, the TinyTransformer, the lens, the parity suite."""
