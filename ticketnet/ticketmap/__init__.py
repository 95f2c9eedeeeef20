"""A map of the tickets: the pooled vector each ticket is routed from, its 2-D projections, its nearest neighbours."""

from ticketnet.ticketmap.neighbours import nearest
from ticketnet.ticketmap.pooled import pooled_and_logits, pooled_of_texts
from ticketnet.ticketmap.projection import MAP_LIMIT, MAP_SEED, PROJECTIONS, project, seeded_sample
from ticketnet.ticketmap.store import MapStore, map_table

__all__ = ["MAP_LIMIT", "MAP_SEED", "PROJECTIONS", "MapStore", "map_table", "nearest", "pooled_and_logits",
           "pooled_of_texts", "project", "seeded_sample"]
