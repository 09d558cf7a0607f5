-- properties_plain: 1 when the row's properties JSON is plain, which lets the event listing test an
-- `exact` property filter with a substring search (`"price":7`) before parsing the JSON of each
-- row (libs/hogql/src/property-filter.ts, plainTextPrefilter). Plain means: no backslash (no
-- escapes: keys and strings appear as they read), no whitespace after a quote or a colon (a member
-- reads `"key":value`), and no number with a fraction or exponent right after a colon (ClickHouse
-- reads `7.0`, `7e0` and `6.9999999999999999` all as 7, so only integer literals spell their
-- value one way). What JSON.stringify writes is plain unless it holds escapes or such numbers;
-- rows that are not plain are parsed, as before. Computed once per row on insert; parts written
-- before this migration get it now through MATERIALIZE (a background mutation; in the same
-- statement, so that it is as idempotent as the ADD), and until then it is computed when read,
-- which is correct, only slower.
ALTER TABLE {database}.events ADD COLUMN IF NOT EXISTS properties_plain UInt8 MATERIALIZED NOT match(properties, '\\\\|"[ \\t\\n\\r]|":[ \\t\\n\\r]|":-?[0-9]+[.eE]'),
    MATERIALIZE COLUMN properties_plain;
