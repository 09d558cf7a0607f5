-- The column of ../single-node/003-add-properties-plain.sql (see there why), stored on every
-- shard's replicated table. The Distributed `events` table in front declares it with the same
-- expression, so reads through it can name the column, while inserts through it leave it to the
-- shards (a MATERIALIZED column is not part of what an insert sends). NOTE: unlike the single-node
-- variant, no test runs this on a real cluster.
ALTER TABLE {database}.events_local {on_cluster} ADD COLUMN IF NOT EXISTS properties_plain UInt8 MATERIALIZED NOT match(properties, '\\\\|"[ \\t\\n\\r]|":[ \\t\\n\\r]|":-?[0-9]+[.eE]'),
    MATERIALIZE COLUMN properties_plain;

ALTER TABLE {database}.events {on_cluster} ADD COLUMN IF NOT EXISTS properties_plain UInt8 MATERIALIZED NOT match(properties, '\\\\|"[ \\t\\n\\r]|":[ \\t\\n\\r]|":-?[0-9]+[.eE]');
