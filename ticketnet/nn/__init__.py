"""The model: from-scratch attention and MultiHead, the TinyTransformer, its eval-mode layers and batching."""
