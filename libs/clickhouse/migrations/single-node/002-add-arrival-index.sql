-- arrival_minmax: a batch-export run owns the events whose timestamp falls in its interval, and
-- also those that arrived late into it (captured, `created_at`, long after their timestamp; see
-- libs/workers/README.md). Both kinds have greatest(timestamp, created_at) at or after the
-- interval's start, so this per-granule min/max lets a run skip the project's older history
-- instead of scanning it for late arrivals. Parts written before this migration get the index
-- when they are merged, or now through MATERIALIZE (a background mutation).
ALTER TABLE {database}.events ADD INDEX IF NOT EXISTS arrival_minmax greatest(timestamp, created_at) TYPE minmax GRANULARITY 1;

ALTER TABLE {database}.events MATERIALIZE INDEX IF EXISTS arrival_minmax;
