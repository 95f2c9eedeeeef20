"""The dashboard's data layer: the router and its cached computations, the splits and their store, the corpus scans."""
