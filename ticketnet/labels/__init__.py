"""Label issues: out-of-fold probabilities (router or baseline folds on Dask) ranked by cleanlab, with token evidence."""
