"""SQL conditions on a row's ``episode_ids`` (the segments a fact or a procedure was learned from), in the subset
DuckDB and PostgreSQL share: the knowledge and procedure tables forget an episode with them."""

FROM_ANY = "episode_ids && ?::VARCHAR[]"
"""Learned from any of the episodes in the parameter."""
FROM_ONLY = "?::VARCHAR[] @> episode_ids"
"""Learned from none but the episodes in the parameter."""
WITHOUT = "array(SELECT e FROM unnest(episode_ids) AS u(e) WHERE NOT e = ANY(?::VARCHAR[]))"
"""``episode_ids`` less the episodes in the parameter, in their order."""
