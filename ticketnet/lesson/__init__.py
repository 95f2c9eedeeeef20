"""The lesson's maths behind the "How attention works" pages: worked examples, sizes and cost measurements."""
