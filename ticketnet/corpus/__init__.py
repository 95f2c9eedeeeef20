"""The corpus scan: a whole ticket stream interpreted on Dask, results in Parquet, read lazily by the Corpus page."""
