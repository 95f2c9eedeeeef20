"""Tickets as data: the tokenizer and vocabulary, the split files, and the generator of the shipped splits."""
