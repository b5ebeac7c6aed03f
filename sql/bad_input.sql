-- Bad input: each SQL function taking parameters refuses every bad value with
-- the SQLSTATE docs/sqlstates.md gives, and changes nothing.  Each call shows
-- only its SQLSTATE ('ok' if it succeeded); calls a role that is not a
-- superuser makes are made as such a role.

-- The SQLSTATE of a statement's error, or 'ok'.
CREATE FUNCTION test.state_of(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;
GRANT USAGE ON SCHEMA test TO PUBLIC;
GRANT EXECUTE ON FUNCTION test.state_of(text) TO PUBLIC;
CREATE ROLE regress_bad_dba LOGIN;
CREATE ROLE regress_bad_analyst LOGIN;

-- -------------------------------------------------------------------------
-- import_ledgers: every field of every ledger is checked before anything is
-- taken in (22023), and a refused import changes nothing: no row, no
-- spending in the store, every view readable by every role.
-- -------------------------------------------------------------------------
SELECT contcount.create_ledger('imp_src', 10);
SELECT contcount.create_ledger('imp_z', rho => 5, delta => 0.000001);
SELECT contcount.grant_ledger('imp_src', 'regress_bad_dba', admin => true);
CREATE TABLE test.imp_rows AS SELECT i FROM generate_series(1, 10) i;
SELECT contcount.noisy_count(0.5, 'imp_src') IS NOT NULL AS released FROM test.imp_rows;
SELECT contcount.noisy_count(0.25, 'imp_src') IS NOT NULL AS released FROM test.imp_rows;

-- a ledger of the export, as a new ledger unknown here (id 4242, 'imp_new'),
-- and the export's header
CREATE TABLE test.imp AS
SELECT (SELECT e || '{"id": 4242, "name": "imp_new"}'
        FROM jsonb_array_elements(x -> 'ledgers') e WHERE e ->> 'name' = 'imp_src') AS pure,
       (SELECT e || '{"id": 4343, "name": "imp_new_z"}'
        FROM jsonb_array_elements(x -> 'ledgers') e WHERE e ->> 'name' = 'imp_z') AS zcdp,
       x - 'ledgers' AS header
FROM contcount.export_ledgers() x;
CREATE FUNCTION test.export_of(VARIADIC ledgers jsonb[]) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT header || jsonb_build_object('ledgers', to_jsonb(ledgers)) FROM test.imp
$$;
CREATE TABLE test.imp_before AS
SELECT (SELECT count(*) FROM contcount.ledger) AS ledgers,
       (SELECT count(*) FROM contcount.budget_changes) AS changes,
       (SELECT count(*) FROM contcount.charges) AS charges,
       (SELECT count(*) FROM contcount.ledger_grant) AS grants;

CREATE TABLE test.imp_cases (n serial, label text, doc jsonb);
INSERT INTO test.imp_cases (label, doc)
SELECT label, test.export_of(VARIADIC ledgers) FROM test.imp, LATERAL (VALUES
    ('budget -1', ARRAY[pure || '{"budget": -1}']),
    ('budget above the limit', ARRAY[pure || '{"budget": 10000000000}']),
    ('budget not a multiple of 1e-9', ARRAY[pure || '{"budget": 0.0000000001}']),
    ('budget a string', ARRAY[pure || '{"budget": "5"}']),
    ('budget null', ARRAY[pure || '{"budget": null}']),
    ('budget missing', ARRAY[pure - 'budget']),
    ('id 0', ARRAY[pure || '{"id": 0}']),
    ('id -1', ARRAY[pure || '{"id": -1}']),
    ('id 1.5', ARRAY[pure || '{"id": 1.5}']),
    ('id 4242.0', ARRAY[pure || '{"id": 4242.0}']),
    ('id 2^63', ARRAY[pure || '{"id": 9223372036854775808}']),
    ('id a string', ARRAY[pure || '{"id": "x"}']),
    ('id missing', ARRAY[pure - 'id']),
    ('name empty', ARRAY[pure || '{"name": ""}']),
    ('name null', ARRAY[pure || '{"name": null}']),
    ('name a number', ARRAY[pure || '{"name": 5}']),
    ('name 1024 bytes', ARRAY[pure || jsonb_build_object('name', repeat('x', 1024))]),
    ('spent_units not the charges'' sum', ARRAY[pure || '{"spent_units": 750000001}']),
    ('spent_units 0 with charges', ARRAY[pure || '{"spent_units": 0}']),
    ('spent_units -1', ARRAY[pure || '{"spent_units": -1}']),
    ('spent_units 1.5', ARRAY[pure || '{"spent_units": 1.5}']),
    ('accounting unknown', ARRAY[pure || '{"accounting": "approximate"}']),
    ('accounting a number', ARRAY[pure || '{"accounting": 1}']),
    ('delta on a pure ledger', ARRAY[pure || '{"delta": 0.001}']),
    ('zcdp ledger without delta', ARRAY[zcdp || '{"delta": null}']),
    ('delta 0', ARRAY[zcdp || '{"delta": 0}']),
    ('delta 1', ARRAY[zcdp || '{"delta": 1}']),
    ('delta a string', ARRAY[zcdp || '{"delta": "0.1"}']),
    ('created_at not a time', ARRAY[pure || '{"created_at": "soon"}']),
    ('created_at infinity', ARRAY[pure || '{"created_at": "infinity"}']),
    ('created_at missing', ARRAY[pure - 'created_at']),
    ('created_at beyond timestamptz', ARRAY[pure || '{"created_at": "294277-01-01"}']),
    ('created_by a number', ARRAY[pure || '{"created_by": 10}']),
    ('dropped_at not a time', ARRAY[pure || '{"dropped_at": "yesterday-ish"}']),
    ('grants not an array', ARRAY[pure || '{"grants": {"role": "regress_bad_dba"}}']),
    ('grant without admin', ARRAY[pure || '{"grants": [{"role": "regress_bad_dba"}]}']),
    ('grant without role', ARRAY[pure || '{"grants": [{"admin": true}]}']),
    ('charges not an array', ARRAY[pure || '{"charges": 3}']),
    ('charge not an object', ARRAY[jsonb_set(pure, '{charges,0}', '1')]),
    ('charge units 0', ARRAY[jsonb_set(pure, '{charges,0,units}', '0')]),
    ('charge units -1', ARRAY[jsonb_set(pure, '{charges,0,units}', '-1')]),
    ('charge units 500000000.0', ARRAY[jsonb_set(pure, '{charges,0,units}', '500000000.0')]),
    ('charge units missing', ARRAY[jsonb_set(pure, '{charges,0}', (pure #> '{charges,0}') - 'units')]),
    ('charge at not a time', ARRAY[jsonb_set(pure, '{charges,0,at}', '"then"')]),
    ('charge refund not a boolean', ARRAY[jsonb_set(pure, '{charges,0,refund}', '"no"')]),
    ('charge refund null', ARRAY[jsonb_set(pure, '{charges,0,refund}', 'null')]),
    ('charge releases -1', ARRAY[jsonb_set(pure, '{charges,0,releases}', '-1')]),
    ('charge release_units 0', ARRAY[jsonb_set(pure, '{charges,0,release_units}', '0')]),
    ('charge not what its releases cost', ARRAY[jsonb_set(pure, '{charges,0,releases}', '2')]),
    ('charge accounting unknown', ARRAY[jsonb_set(pure, '{charges,0,accounting}', '"approximate"')]),
    ('charge zcdp on a pure ledger', ARRAY[jsonb_set(pure, '{charges,0,accounting}', '"zcdp"')]),
    ('charge function null', ARRAY[jsonb_set(pure, '{charges,0,function}', 'null')]),
    ('charge statement a number', ARRAY[jsonb_set(pure, '{charges,0,statement}', '1')]),
    ('charge role a number', ARRAY[jsonb_set(pure, '{charges,0,role}', '10')]),
    ('refund beyond the charges', ARRAY[jsonb_set(jsonb_set(pure, '{charges,0,refund}', 'true'),
                                                  '{spent_units}', '0')]),
    ('blocks not an array', ARRAY[pure || '{"blocks": "none"}']),
    ('block ending before it starts',
     ARRAY[pure || '{"blocks": [{"start": "2026-01-02", "end": "2026-01-01", "spent_units": 1}]}']),
    ('block spent nothing',
     ARRAY[pure || '{"blocks": [{"start": "2026-01-01", "end": "2026-01-02", "spent_units": 0}]}']),
    ('block start not a time',
     ARRAY[pure || '{"blocks": [{"start": "now-ish", "end": "2026-01-02", "spent_units": 1}]}']),
    ('blocks overlapping',
     ARRAY[pure || '{"blocks": [{"start": "2026-01-01", "end": "2026-01-03", "spent_units": 1},
                               {"start": "2026-01-02", "end": "2026-01-04", "spent_units": 1}]}']),
    ('two ledgers with one id', ARRAY[pure, pure || '{"name": "imp_other"}']),
    ('two live ledgers with one name', ARRAY[pure, pure || '{"id": 4244}']),
    ('a good ledger, then a bad one', ARRAY[pure, zcdp || '{"budget": -1}']),
    ('a ledger not an object', ARRAY[pure, '"imp"'::jsonb])
) AS cases(label, ledgers);
INSERT INTO test.imp_cases (label, doc) VALUES
    ('export null', NULL),
    ('not an object', '[]'),
    ('ledgers missing', (SELECT header FROM test.imp)),
    ('ledgers not an array', (SELECT header || '{"ledgers": {}}' FROM test.imp)),
    ('format wrong', (SELECT test.export_of(pure) || '{"format": "other"}' FROM test.imp)),
    ('version 3', (SELECT test.export_of(pure) || '{"version": 3}' FROM test.imp)),
    ('exported_at not a time', (SELECT test.export_of(pure) || '{"exported_at": "x"}' FROM test.imp)),
    ('system_identifier a number', (SELECT test.export_of(pure) || '{"system_identifier": 1}' FROM test.imp));
SELECT label, test.state_of(format('SELECT * FROM contcount.import_ledgers(%L)', doc)) AS state
FROM test.imp_cases ORDER BY n;

-- more new ledgers, or blocks, than the store has room for: refused before
-- any is taken in (53400)
SELECT test.state_of(format('SELECT * FROM contcount.import_ledgers(%L)', test.export_of(VARIADIC ARRAY(
           SELECT pure || jsonb_build_object('id', 5000 + i, 'name', 'imp_room_' || i)
           FROM generate_series(1, current_setting('contcount.max_ledgers')::int + 1) i)))) AS ledgers,
       test.state_of(format('SELECT * FROM contcount.import_ledgers(%L)', test.export_of(
           pure || jsonb_build_object('blocks', (
               SELECT jsonb_agg(jsonb_build_object(
                          'start', '2000-01-01'::timestamptz + i * interval '1 day',
                          'end', '2000-01-01'::timestamptz + (i + 1) * interval '1 day',
                          'spent_units', 1) ORDER BY i)
               FROM generate_series(0, current_setting('contcount.max_blocks')::int) i))))) AS blocks
FROM test.imp;
SELECT count(*) AS stored FROM generate_series(5001, 5000 + current_setting('contcount.max_ledgers')::int + 1) i
WHERE contcount_internal.store_spent(i) IS NOT NULL;

-- nothing was taken in: no row, no spending in the store, no audit
SELECT (SELECT count(*) FROM contcount.ledger) = ledgers AS same_ledgers,
       (SELECT count(*) FROM contcount.budget_changes) = changes AS same_changes,
       (SELECT count(*) FROM contcount.charges) = charges AS same_charges,
       (SELECT count(*) FROM contcount.ledger_grant) = grants AS same_grants,
       contcount_internal.store_spent(4242) IS NULL AND contcount_internal.store_spent(4343) IS NULL AS nothing_stored
FROM test.imp_before;
-- and the views read as before, by a role that is not a superuser, who can
-- still manage its ledger
\c - regress_bad_dba
SELECT name, budget, spent, remaining FROM contcount.ledgers WHERE name LIKE 'imp%' ORDER BY name;
SELECT count(*) > 0 AS readable FROM contcount.budget_changes;
SELECT test.state_of($$SELECT contcount.alter_ledger('imp_src', 9)$$) AS alter_ledger;
\c - postgres
-- the same ledgers, well formed, are taken in
SELECT ledger, spent, action FROM test.imp, contcount.import_ledgers(test.export_of(pure, zcdp))
ORDER BY ledger;
\c - regress_bad_dba
SELECT name, budget, spent, remaining FROM contcount.ledgers WHERE name LIKE 'imp%' ORDER BY name;
SELECT test.state_of($$SELECT contcount.drop_ledger('imp_src')$$) AS drop_ledger;
\c - postgres

-- -------------------------------------------------------------------------
-- The sweep: each function, each bad value, as the role it is meant for.
-- -------------------------------------------------------------------------
CREATE TABLE test.sw_t (u int, at timestamptz, v float8, c text);
INSERT INTO test.sw_t SELECT i % 7, '2026-01-01'::timestamptz + i * interval '1 hour', i, 'x'
FROM generate_series(1, 50) i;
SELECT contcount.create_ledger('sw_team', 1000000);
SELECT contcount.create_ledger('sw_data', 1000000);
SELECT contcount.create_ledger('sw_z', rho => 1000, delta => 0.000001);
SELECT contcount.grant_ledger('sw_team', 'regress_bad_analyst');
SELECT contcount.grant_ledger('sw_z', 'regress_bad_analyst');
SELECT contcount.grant_ledger('sw_data', 'regress_bad_dba', admin => true);
SELECT contcount.grant_ledger('sw_z', 'regress_bad_dba', admin => true);
GRANT EXECUTE ON FUNCTION contcount.create_ledger(text, numeric), contcount.create_ledger(text, numeric, numeric),
    contcount.protect_table(text, regclass, text, text, text, integer, integer),
    contcount.source_dimension(text, text, text[]), contcount.grant_source(text, regrole),
    contcount.revoke_source(text, regrole), contcount.drop_source(text),
    contcount.source_blocks(text, interval, numeric, interval), contcount.source_expired_rows(text),
    contcount.source_mean_value(text, text), contcount.drop_source_mean_value(text, text)
    TO regress_bad_dba;
ALTER TABLE test.sw_t OWNER TO regress_bad_dba;
CREATE TABLE test.sw_counted (u int, at timestamptz);
ALTER TABLE test.sw_counted OWNER TO regress_bad_dba;

\c - regress_bad_dba
SELECT contcount.protect_table('sw_src', 'test.sw_t', 'u', 'at', 'sw_data', 3, 2);
SELECT contcount.source_dimension('sw_src', 'c', ARRAY['x', 'y']);
SELECT contcount.source_mean_value('sw_src', 'v');
SELECT contcount.grant_source('sw_src', 'regress_bad_analyst');
SELECT contcount.protect_table('sw_cnt', 'test.sw_counted', 'u', 'at', 'sw_data');
SELECT contcount.grant_source('sw_cnt', 'regress_bad_analyst');
SELECT fn, label, test.state_of(s) AS state FROM (VALUES
    ('create_ledger', 'name null', $$SELECT contcount.create_ledger(NULL, 1)$$),
    ('create_ledger', 'name empty', $$SELECT contcount.create_ledger('', 1)$$),
    ('create_ledger', 'name 1024 bytes', $$SELECT contcount.create_ledger(repeat('x', 1024), 1)$$),
    ('create_ledger', 'name taken', $$SELECT contcount.create_ledger('sw_data', 1)$$),
    ('create_ledger', 'epsilon null', $$SELECT contcount.create_ledger('sw_new', NULL::numeric)$$),
    ('create_ledger', 'epsilon -1', $$SELECT contcount.create_ledger('sw_new', -1)$$),
    ('create_ledger', 'epsilon NaN', $$SELECT contcount.create_ledger('sw_new', 'NaN')$$),
    ('create_ledger', 'epsilon Infinity', $$SELECT contcount.create_ledger('sw_new', 'Infinity')$$),
    ('create_ledger', 'epsilon 1e-10', $$SELECT contcount.create_ledger('sw_new', 1e-10)$$),
    ('create_ledger', 'epsilon 1e10', $$SELECT contcount.create_ledger('sw_new', 1e10)$$),
    ('create_ledger', 'rho NaN', $$SELECT contcount.create_ledger('sw_new', rho => 'NaN', delta => 0.1)$$),
    ('create_ledger', 'rho -Infinity', $$SELECT contcount.create_ledger('sw_new', rho => '-Infinity', delta => 0.1)$$),
    ('create_ledger', 'delta null', $$SELECT contcount.create_ledger('sw_new', rho => 1, delta => NULL)$$),
    ('create_ledger', 'delta 0', $$SELECT contcount.create_ledger('sw_new', rho => 1, delta => 0)$$),
    ('create_ledger', 'delta 1', $$SELECT contcount.create_ledger('sw_new', rho => 1, delta => 1)$$),
    ('create_ledger', 'delta NaN', $$SELECT contcount.create_ledger('sw_new', rho => 1, delta => 'NaN')$$),
    ('create_ledger', 'delta 1e-400', $$SELECT contcount.create_ledger('sw_new', rho => 1, delta => 1e-400)$$),
    ('alter_ledger', 'name null', $$SELECT contcount.alter_ledger(NULL, 1)$$),
    ('alter_ledger', 'unknown', $$SELECT contcount.alter_ledger('sw_none', 1)$$),
    ('alter_ledger', 'epsilon null', $$SELECT contcount.alter_ledger('sw_data', NULL::numeric)$$),
    ('alter_ledger', 'epsilon NaN', $$SELECT contcount.alter_ledger('sw_data', 'NaN')$$),
    ('alter_ledger', 'epsilon -1', $$SELECT contcount.alter_ledger('sw_data', -1)$$),
    ('alter_ledger', 'epsilon 1e10', $$SELECT contcount.alter_ledger('sw_data', 1e10)$$),
    ('alter_ledger', 'rho on a pure ledger', $$SELECT contcount.alter_ledger('sw_data', rho => 1, delta => NULL)$$),
    ('alter_ledger', 'rho and delta null', $$SELECT contcount.alter_ledger('sw_z', rho => NULL, delta => NULL)$$),
    ('alter_ledger', 'delta 2', $$SELECT contcount.alter_ledger('sw_z', rho => NULL, delta => 2)$$),
    ('alter_ledger', 'epsilon on a zcdp ledger', $$SELECT contcount.alter_ledger('sw_z', 1)$$),
    ('drop_ledger', 'null', $$SELECT contcount.drop_ledger(NULL)$$),
    ('drop_ledger', 'unknown', $$SELECT contcount.drop_ledger('sw_none')$$),
    ('drop_ledger', 'empty', $$SELECT contcount.drop_ledger('')$$),
    ('grant_ledger', 'ledger null', $$SELECT contcount.grant_ledger(NULL, 'regress_bad_analyst')$$),
    ('grant_ledger', 'role null', $$SELECT contcount.grant_ledger('sw_data', NULL)$$),
    ('grant_ledger', 'admin null', $$SELECT contcount.grant_ledger('sw_data', 'regress_bad_analyst', NULL)$$),
    ('grant_ledger', 'unknown ledger', $$SELECT contcount.grant_ledger('sw_none', 'regress_bad_analyst')$$),
    ('grant_ledger', 'unknown role', $$SELECT contcount.grant_ledger('sw_data', 'regress_no_role')$$),
    ('revoke_ledger', 'ledger null', $$SELECT contcount.revoke_ledger(NULL, 'regress_bad_analyst')$$),
    ('revoke_ledger', 'role null', $$SELECT contcount.revoke_ledger('sw_data', NULL)$$),
    ('revoke_ledger', 'unknown ledger', $$SELECT contcount.revoke_ledger('sw_none', 'regress_bad_analyst')$$),
    ('protect_table', 'name null', $$SELECT contcount.protect_table(NULL, 'test.sw_t', 'u', 'at', 'sw_data')$$),
    ('protect_table', 'name empty', $$SELECT contcount.protect_table('', 'test.sw_t', 'u', 'at', 'sw_data')$$),
    ('protect_table', 'name taken', $$SELECT contcount.protect_table('sw_src', 'test.sw_t', 'u', 'at', 'sw_data')$$),
    ('protect_table', 'relation null', $$SELECT contcount.protect_table('sw_new', NULL, 'u', 'at', 'sw_data')$$),
    ('protect_table', 'unit column null', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', NULL, 'at', 'sw_data')$$),
    ('protect_table', 'unit column unknown', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'nope', 'at', 'sw_data')$$),
    ('protect_table', 'time column null', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', NULL, 'sw_data')$$),
    ('protect_table', 'time column not a time', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'v', 'sw_data')$$),
    ('protect_table', 'ledger null', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', NULL)$$),
    ('protect_table', 'ledger unknown', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', 'sw_none')$$),
    ('protect_table', 'max_rows null', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', 'sw_data', NULL, 1)$$),
    ('protect_table', 'max_groups null', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', 'sw_data', 1, NULL)$$),
    ('protect_table', 'max_rows 0', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', 'sw_data', 0, 1)$$),
    ('protect_table', 'max_rows -1', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', 'sw_data', -1, 1)$$),
    ('protect_table', 'max_rows 1000001', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', 'sw_data', 1000001, 1)$$),
    ('protect_table', 'max_groups 0', $$SELECT contcount.protect_table('sw_new', 'test.sw_t', 'u', 'at', 'sw_data', 1, 0)$$),
    ('source_dimension', 'source null', $$SELECT contcount.source_dimension(NULL, 'c', ARRAY['x'])$$),
    ('source_dimension', 'source unknown', $$SELECT contcount.source_dimension('sw_none', 'c', ARRAY['x'])$$),
    ('source_dimension', 'dimension null', $$SELECT contcount.source_dimension('sw_src', NULL, ARRAY['x'])$$),
    ('source_dimension', 'dimension unknown', $$SELECT contcount.source_dimension('sw_src', 'nope', ARRAY['x'])$$),
    ('source_dimension', 'keys null', $$SELECT contcount.source_dimension('sw_src', 'c', NULL)$$),
    ('source_dimension', 'keys empty', $$SELECT contcount.source_dimension('sw_src', 'c', '{}')$$),
    ('source_dimension', 'a key null', $$SELECT contcount.source_dimension('sw_src', 'c', ARRAY['x', NULL])$$),
    ('source_dimension', 'keys 2-D', $$SELECT contcount.source_dimension('sw_src', 'c', '{{x},{y}}')$$),
    ('grant_source', 'source null', $$SELECT contcount.grant_source(NULL, 'regress_bad_analyst')$$),
    ('grant_source', 'role null', $$SELECT contcount.grant_source('sw_src', NULL)$$),
    ('grant_source', 'source unknown', $$SELECT contcount.grant_source('sw_none', 'regress_bad_analyst')$$),
    ('revoke_source', 'source unknown', $$SELECT contcount.revoke_source('sw_none', 'regress_bad_analyst')$$),
    ('revoke_source', 'role null', $$SELECT contcount.revoke_source('sw_src', NULL)$$),
    ('drop_source', 'null', $$SELECT contcount.drop_source(NULL)$$),
    ('drop_source', 'unknown', $$SELECT contcount.drop_source('sw_none')$$),
    ('source_blocks', 'source null', $$SELECT contcount.source_blocks(NULL, '1 day', 1, '30 days')$$),
    ('source_blocks', 'source unknown', $$SELECT contcount.source_blocks('sw_none', '1 day', 1, '30 days')$$),
    ('source_blocks', 'length null', $$SELECT contcount.source_blocks('sw_src', NULL, 1, '30 days')$$),
    ('source_blocks', 'length 0', $$SELECT contcount.source_blocks('sw_src', '0', 1, '30 days')$$),
    ('source_blocks', 'length negative', $$SELECT contcount.source_blocks('sw_src', '-1 day', 1, '30 days')$$),
    ('source_blocks', 'length a month', $$SELECT contcount.source_blocks('sw_src', '1 month', 1, '30 days')$$),
    ('source_blocks', 'length beyond int64', $$SELECT contcount.source_blocks('sw_src', '200000000 days', 1, '30 days')$$),
    ('source_blocks', 'budget null', $$SELECT contcount.source_blocks('sw_src', '1 day', NULL, '30 days')$$),
    ('source_blocks', 'budget 0', $$SELECT contcount.source_blocks('sw_src', '1 day', 0, '30 days')$$),
    ('source_blocks', 'budget -1', $$SELECT contcount.source_blocks('sw_src', '1 day', -1, '30 days')$$),
    ('source_blocks', 'budget NaN', $$SELECT contcount.source_blocks('sw_src', '1 day', 'NaN', '30 days')$$),
    ('source_blocks', 'budget Infinity', $$SELECT contcount.source_blocks('sw_src', '1 day', 'Infinity', '30 days')$$),
    ('source_blocks', 'budget 1e10', $$SELECT contcount.source_blocks('sw_src', '1 day', 1e10, '30 days')$$),
    ('source_blocks', 'budget 1e-10', $$SELECT contcount.source_blocks('sw_src', '1 day', 1e-10, '30 days')$$),
    ('source_blocks', 'retention null', $$SELECT contcount.source_blocks('sw_src', '1 day', 1, NULL)$$),
    ('source_blocks', 'retention 0', $$SELECT contcount.source_blocks('sw_src', '1 day', 1, '0')$$),
    ('source_blocks', 'retention a month', $$SELECT contcount.source_blocks('sw_src', '1 day', 1, '1 month')$$),
    ('source_expired_rows', 'null', $$SELECT contcount.source_expired_rows(NULL)$$),
    ('source_expired_rows', 'unknown', $$SELECT contcount.source_expired_rows('sw_none')$$),
    ('source_expired_rows', 'no blocks', $$SELECT contcount.source_expired_rows('sw_src')$$),
    ('source_mean_value', 'source null', $$SELECT contcount.source_mean_value(NULL, 'v')$$),
    ('source_mean_value', 'column null', $$SELECT contcount.source_mean_value('sw_src', NULL)$$),
    ('source_mean_value', 'column unknown', $$SELECT contcount.source_mean_value('sw_src', 'nope')$$),
    ('source_mean_value', 'column text', $$SELECT contcount.source_mean_value('sw_src', 'c')$$),
    ('source_mean_value', 'source unknown', $$SELECT contcount.source_mean_value('sw_none', 'v')$$),
    ('drop_source_mean_value', 'column null', $$SELECT contcount.drop_source_mean_value('sw_src', NULL)$$),
    ('drop_source_mean_value', 'column not declared', $$SELECT contcount.drop_source_mean_value('sw_src', 'u')$$)
) AS cases(fn, label, s);
\c - postgres

SELECT contcount.protect_table('sw_src2', 'test.sw_t', 'u', 'at', 'sw_data');
ALTER ROLE regress_bad_analyst SET contcount.ledger = 'sw_team';
\c - regress_bad_analyst
SELECT contcount.create_counter('sw_c', 1, horizon => 10, step => '1 day', mechanism => 'binary');
SELECT fn, label, test.state_of(s) AS state FROM (VALUES
    ('mechanism', 'name null', $$SELECT contcount.mechanism(NULL, 1, 10)$$),
    ('mechanism', 'name empty', $$SELECT contcount.mechanism('', 1, 10)$$),
    ('mechanism', 'name unknown', $$SELECT contcount.mechanism('BINARY', 1, 10)$$),
    ('mechanism', 'epsilon NaN', $$SELECT contcount.mechanism('binary', 'NaN', 10)$$),
    ('mechanism', 'epsilon Infinity', $$SELECT contcount.mechanism('binary', 'Infinity', 10)$$),
    ('mechanism', 'epsilon -Infinity', $$SELECT contcount.mechanism('binary', '-Infinity', 10)$$),
    ('mechanism', 'epsilon 0', $$SELECT contcount.mechanism('binary', 0, 10)$$),
    ('mechanism', 'epsilon -1', $$SELECT contcount.mechanism('binary', -1, 10)$$),
    ('mechanism', 'epsilon 1e300', $$SELECT contcount.mechanism('binary', 1e300, 10)$$),
    ('mechanism', 'epsilon 1e-300', $$SELECT contcount.mechanism('binary', 1e-300, 10)$$),
    ('mechanism', 'neither epsilon nor rho', $$SELECT contcount.mechanism('binary', NULL, 10)$$),
    ('mechanism', 'epsilon and rho', $$SELECT contcount.mechanism('auto', 1, 10, rho => 1)$$),
    ('mechanism', 'rho for a Laplace one', $$SELECT contcount.mechanism('binary', horizon => 10, rho => 1)$$),
    ('mechanism', 'rho NaN', $$SELECT contcount.mechanism('blt', horizon => 10, rho => 'NaN')$$),
    ('mechanism', 'rho Infinity', $$SELECT contcount.mechanism('blt', horizon => 10, rho => 'Infinity')$$),
    ('mechanism', 'rho 0', $$SELECT contcount.mechanism('blt', horizon => 10, rho => 0)$$),
    ('mechanism', 'horizon null', $$SELECT contcount.mechanism('binary', 1, NULL)$$),
    ('mechanism', 'horizon 0', $$SELECT contcount.mechanism('binary', 1, 0)$$),
    ('mechanism', 'horizon -1', $$SELECT contcount.mechanism('binary', 1, -1)$$),
    ('mechanism', 'horizon 2^62 + 1', $$SELECT contcount.mechanism('binary', 1, 4611686018427387905)$$),
    ('mechanism', 'horizon 2^63 - 1', $$SELECT contcount.mechanism('hybrid', 1, 9223372036854775807)$$),
    ('mechanism', 'blt horizon 2^40 + 1', $$SELECT contcount.mechanism('blt', horizon => 1099511627777, rho => 1)$$),
    ('mechanism', 'block 0', $$SELECT contcount.mechanism('two_level', 1, 10, block => 0)$$),
    ('mechanism', 'block beyond horizon', $$SELECT contcount.mechanism('two_level', 1, 10, block => 11)$$),
    ('mechanism', 'block for binary', $$SELECT contcount.mechanism('binary', 1, 10, block => 2)$$),
    ('mechanism', 'sensitivity null', $$SELECT contcount.mechanism('binary', 1, 10, sensitivity => NULL)$$),
    ('mechanism', 'sensitivity 0', $$SELECT contcount.mechanism('binary', 1, 10, sensitivity => 0)$$),
    ('mechanism', 'sensitivity 10^6 + 1', $$SELECT contcount.mechanism('binary', 1, 10, sensitivity => 1000001)$$),
    ('mechanism', 'beta null', $$SELECT contcount.mechanism('binary', 1, 10, beta => NULL)$$),
    ('mechanism', 'beta 0', $$SELECT contcount.mechanism('binary', 1, 10, beta => 0)$$),
    ('mechanism', 'beta 1', $$SELECT contcount.mechanism('binary', 1, 10, beta => 1)$$),
    ('mechanism', 'beta NaN', $$SELECT contcount.mechanism('binary', 1, 10, beta => 'NaN')$$),
    ('mechanism', 'objective unknown', $$SELECT contcount.mechanism('auto', 1, 10, objective => 'best')$$),
    ('mechanism', 'objective for a named one', $$SELECT contcount.mechanism('binary', 1, 10, objective => 'mean')$$),
    ('mechanism', 'auto without horizon', $$SELECT contcount.mechanism('auto', 1, NULL)$$),
    ('mechanism', 'noise scale above 10^15', $$SELECT contcount.mechanism('simple_i', 0.000001, 4611686018427387904, sensitivity => 1000000)$$),
    ('running_counts', 'items null', $$SELECT * FROM contcount.running_counts(NULL, 1, mechanism => 'binary')$$),
    ('running_counts', 'items 2-D', $$SELECT * FROM contcount.running_counts('{{1},{2}}', 1, mechanism => 'binary')$$),
    ('running_counts', 'an item null', $$SELECT * FROM contcount.running_counts(ARRAY[1, NULL], 1, mechanism => 'binary')$$),
    ('running_counts', 'an item negative', $$SELECT * FROM contcount.running_counts(ARRAY[1, -1], 1, mechanism => 'binary')$$),
    ('running_counts', 'an item above sensitivity', $$SELECT * FROM contcount.running_counts(ARRAY[1, 2], 1, mechanism => 'binary')$$),
    ('running_counts', 'epsilon NaN', $$SELECT * FROM contcount.running_counts(ARRAY[1], 'NaN', mechanism => 'binary')$$),
    ('running_counts', 'more items than horizon', $$SELECT * FROM contcount.running_counts(ARRAY[1, 1], 1, horizon => 1, mechanism => 'binary')$$),
    ('running_counts', 'mechanism null', $$SELECT * FROM contcount.running_counts(ARRAY[1], 1, NULL)$$),
    ('running_counts', 'ledger unknown', $$SELECT * FROM contcount.running_counts(ARRAY[1], 1, ledger => 'sw_none', mechanism => 'binary')$$),
    ('running_counts', 'ledger not granted', $$SELECT * FROM contcount.running_counts(ARRAY[1], 1, ledger => 'sw_data', mechanism => 'binary')$$),
    ('running_counts', 'ledger empty', $$SELECT * FROM contcount.running_counts(ARRAY[1], 1, ledger => '', mechanism => 'binary')$$),
    ('running_counts', 'Gaussian on a pure ledger', $$SELECT * FROM contcount.running_counts(ARRAY[1], mechanism => 'blt', rho => 1)$$),
    ('running_counts', 'budget exceeded', $$SELECT * FROM contcount.running_counts(ARRAY[1], 1000, ledger => 'sw_z', mechanism => 'binary')$$),
    ('running_count', 'epsilon NaN', $$SELECT contcount.running_count(1, 'NaN'::float8, 10)$$),
    ('running_count', 'epsilon null', $$SELECT contcount.running_count(1, NULL::float8, 10)$$),
    ('running_count', 'horizon 0', $$SELECT contcount.running_count(1, 1, 0)$$),
    ('running_count', 'mechanism null', $$SELECT contcount.running_count(1, NULL::contcount.mechanism)$$),
    ('running_count', 'item negative', $$SELECT contcount.running_count(-1, 1, 10)$$),
    ('running_count', 'parameters from a column', $$SELECT contcount.running_count(1, i::float8, 10) FROM generate_series(1, 2) i$$),
    ('running_count', 'moving frame', $$SELECT contcount.running_count(1, 1, 10) OVER (ROWS 1 PRECEDING) FROM generate_series(1, 2)$$),
    ('noisy_count', 'epsilon null', $$SELECT contcount.noisy_count(NULL) FROM generate_series(1, 2)$$),
    ('noisy_count', 'epsilon NaN', $$SELECT contcount.noisy_count('NaN') FROM generate_series(1, 2)$$),
    ('noisy_count', 'epsilon -Infinity', $$SELECT contcount.noisy_count('-Infinity') FROM generate_series(1, 2)$$),
    ('noisy_count', 'epsilon 0', $$SELECT contcount.noisy_count(0) FROM generate_series(1, 2)$$),
    ('noisy_count', 'ledger unknown', $$SELECT contcount.noisy_count(1, 'sw_none') FROM generate_series(1, 2)$$),
    ('noisy_count', 'ledger null', $$SELECT contcount.noisy_count(1, NULL) FROM generate_series(1, 2)$$),
    ('noisy_count', 'as a window', $$SELECT contcount.noisy_count(1) OVER () FROM generate_series(1, 2)$$),
    ('window_counts', 'items null', $$SELECT * FROM contcount.window_counts(NULL, 2, 1)$$),
    ('window_counts', 'width null', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], NULL, 1)$$),
    ('window_counts', 'width 0', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 0, 1)$$),
    ('window_counts', 'width -1', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], -1, 1)$$),
    ('window_counts', 'width 2^63 - 1', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 9223372036854775807, 1)$$),
    ('window_counts', 'epsilon null', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, NULL)$$),
    ('window_counts', 'epsilon NaN', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 'NaN')$$),
    ('window_counts', 'construction unknown', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, 'forest')$$),
    ('window_counts', 'construction null', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, NULL)$$),
    ('window_counts', 'sensitivity 0', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, sensitivity => 0)$$),
    ('window_counts', 'beta 1', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, beta => 1)$$),
    ('window_counts', 'an item negative', $$SELECT * FROM contcount.window_counts(ARRAY[1, -2], 2, 1)$$),
    ('window_counts', 'items 2-D', $$SELECT * FROM contcount.window_counts('{{1},{2}}', 2, 1)$$),
    ('window_counts', 'ledger unknown', $$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, ledger => 'sw_none')$$),
    ('streaming_composition', 'epsilon_max NaN', $$SELECT * FROM contcount.streaming_composition('NaN'::float8, 0.1, 1, 10)$$),
    ('streaming_composition', 'epsilon_max -1', $$SELECT * FROM contcount.streaming_composition(-1, 0.1, 1, 10)$$),
    ('streaming_composition', 'epsilon_max Infinity', $$SELECT * FROM contcount.streaming_composition('Infinity'::float8, 0.1, 1, 10)$$),
    ('streaming_composition', 'delta_max -0.1', $$SELECT * FROM contcount.streaming_composition(1, -0.1, 1, 10)$$),
    ('streaming_composition', 'delta_max 2', $$SELECT * FROM contcount.streaming_composition(1, 2, 1, 10)$$),
    ('streaming_composition', 'delta_max NaN', $$SELECT * FROM contcount.streaming_composition(1, 'NaN', 1, 10)$$),
    ('streaming_composition', 'gamma below epsilon_max', $$SELECT * FROM contcount.streaming_composition(1, 0.1, 0.5, 10)$$),
    ('streaming_composition', 'gamma Infinity', $$SELECT * FROM contcount.streaming_composition(1, 0.1, 'Infinity', 10)$$),
    ('streaming_composition', 'steps 0', $$SELECT * FROM contcount.streaming_composition(1, 0.1, 1, 0)$$),
    ('streaming_composition', 'steps 2^63 - 1', $$SELECT * FROM contcount.streaming_composition(1, 0.1, 1, 9223372036854775807)$$),
    ('streaming_composition', 'Gaussian at delta 0', $$SELECT * FROM contcount.streaming_composition(contcount.mechanism('blt', horizon => 10, rho => 1), 0, 1, 10)$$),
    ('mean_mechanism', 'lo null', $$SELECT contcount.mean_mechanism(NULL, 1, 1, 10, 1)$$),
    ('mean_mechanism', 'lo NaN', $$SELECT contcount.mean_mechanism('NaN', 1, 1, 10, 1)$$),
    ('mean_mechanism', 'hi Infinity', $$SELECT contcount.mean_mechanism(0, 'Infinity', 1, 10, 1)$$),
    ('mean_mechanism', 'lo above hi', $$SELECT contcount.mean_mechanism(2, 1, 1, 10, 1)$$),
    ('mean_mechanism', 'lo equal to hi', $$SELECT contcount.mean_mechanism(1, 1, 1, 10, 1)$$),
    ('mean_mechanism', 'epsilon null', $$SELECT contcount.mean_mechanism(0, 1, NULL, 10, 1)$$),
    ('mean_mechanism', 'epsilon NaN', $$SELECT contcount.mean_mechanism(0, 1, 'NaN', 10, 1)$$),
    ('mean_mechanism', 'epsilon 0', $$SELECT contcount.mean_mechanism(0, 1, 0, 10, 1)$$),
    ('mean_mechanism', 'horizon null', $$SELECT contcount.mean_mechanism(0, 1, 1, NULL, 1)$$),
    ('mean_mechanism', 'horizon 0', $$SELECT contcount.mean_mechanism(0, 1, 1, 0, 1)$$),
    ('mean_mechanism', 'horizon 2^63 - 1', $$SELECT contcount.mean_mechanism(0, 1, 1, 9223372036854775807, 1)$$),
    ('mean_mechanism', 'per_unit null', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, NULL)$$),
    ('mean_mechanism', 'per_unit 0', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 0)$$),
    ('mean_mechanism', 'per_unit above horizon', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 11)$$),
    ('mean_mechanism', 'units 0', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, units => 0)$$),
    ('mean_mechanism', 'units -1', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, units => -1)$$),
    ('mean_mechanism', 'algorithm unknown', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, algorithm => 'average')$$),
    ('mean_mechanism', 'algorithm null', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, algorithm => NULL)$$),
    ('mean_mechanism', 'resolution 0', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, resolution => 0)$$),
    ('mean_mechanism', 'resolution -1', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, resolution => -1)$$),
    ('mean_mechanism', 'resolution 2^63 - 1', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, resolution => 9223372036854775807)$$),
    ('mean_mechanism', 'beta 0', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, beta => 0)$$),
    ('mean_mechanism', 'beta null', $$SELECT contcount.mean_mechanism(0, 1, 1, 10, 1, beta => NULL)$$),
    ('running_mean', 'unit null', $$SELECT contcount.running_mean(1, NULL::int, 0, 1, 1, 10, 1)$$),
    ('running_mean', 'sample NaN', $$SELECT contcount.running_mean('NaN', 1, 0, 1, 1, 10, 1)$$),
    ('running_mean', 'sample Infinity', $$SELECT contcount.running_mean('Infinity', 1, 0, 1, 1, 10, 1)$$),
    ('running_mean', 'epsilon NaN', $$SELECT contcount.running_mean(1, 1, 0, 1, 'NaN', 10, 1)$$),
    ('running_mean', 'mechanism null', $$SELECT contcount.running_mean(1, 1, NULL::contcount.mean_mechanism)$$),
    ('running_mean', 'more samples than horizon', $$SELECT contcount.running_mean(1, i, 0, 1, 1, 1, 1) FROM generate_series(1, 2) i$$),
    ('ledger_delta', 'ledger null', $$SELECT contcount.ledger_delta(NULL, 1)$$),
    ('ledger_delta', 'ledger unknown', $$SELECT contcount.ledger_delta('sw_none', 1)$$),
    ('ledger_delta', 'ledger not seen', $$SELECT contcount.ledger_delta('sw_data', 1)$$),
    ('ledger_delta', 'epsilon null', $$SELECT contcount.ledger_delta('sw_team', NULL)$$),
    ('ledger_delta', 'epsilon NaN', $$SELECT contcount.ledger_delta('sw_team', 'NaN')$$),
    ('ledger_delta', 'epsilon -1', $$SELECT contcount.ledger_delta('sw_team', -1)$$),
    ('ledger_delta', 'epsilon Infinity', $$SELECT contcount.ledger_delta('sw_team', 'Infinity')$$),
    ('ledger_epsilon', 'delta null', $$SELECT contcount.ledger_epsilon('sw_team', NULL)$$),
    ('ledger_epsilon', 'delta NaN', $$SELECT contcount.ledger_epsilon('sw_team', 'NaN')$$),
    ('ledger_epsilon', 'delta -1', $$SELECT contcount.ledger_epsilon('sw_team', -1)$$),
    ('ledger_epsilon', 'delta 2', $$SELECT contcount.ledger_epsilon('sw_team', 2)$$),
    ('source_counts', 'source null', $$SELECT * FROM contcount.source_counts(NULL, 1)$$),
    ('source_counts', 'source unknown', $$SELECT * FROM contcount.source_counts('sw_none', 1)$$),
    ('source_counts', 'source not granted', $$SELECT * FROM contcount.source_counts('sw_src2', 1)$$),
    ('source_counts', 'epsilon null', $$SELECT * FROM contcount.source_counts('sw_src', NULL)$$),
    ('source_counts', 'epsilon NaN', $$SELECT * FROM contcount.source_counts('sw_src', 'NaN')$$),
    ('source_counts', 'epsilon -Infinity', $$SELECT * FROM contcount.source_counts('sw_src', '-Infinity')$$),
    ('source_counts', 'dimension unknown', $$SELECT * FROM contcount.source_counts('sw_src', 1, 'nope')$$),
    ('source_counts', 'dimension empty', $$SELECT * FROM contcount.source_counts('sw_src', 1, '')$$),
    ('source_counts', 'ledger unknown', $$SELECT * FROM contcount.source_counts('sw_src', 1, ledger => 'sw_none')$$),
    ('source_counts', 'filter not an object', $$SELECT * FROM contcount.source_counts('sw_src', 1, filter => '[1]')$$),
    ('source_counts', 'filter unknown dimension', $$SELECT * FROM contcount.source_counts('sw_src', 1, filter => '{"nope": "x"}')$$),
    ('source_counts', 'filter unknown key', $$SELECT * FROM contcount.source_counts('sw_src', 1, filter => '{"c": "z"}')$$),
    ('source_running_counts', 'step null', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, NULL, '2026-01-01', 2, mechanism => 'binary')$$),
    ('source_running_counts', 'step 0', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '0', '2026-01-01', 2, mechanism => 'binary')$$),
    ('source_running_counts', 'step a month', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 month', '2026-01-01', 2, mechanism => 'binary')$$),
    ('source_running_counts', 'step beyond int64', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '200000000 days', '2026-01-01', 2, mechanism => 'binary')$$),
    ('source_running_counts', 'start null', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 day', NULL, 2, mechanism => 'binary')$$),
    ('source_running_counts', 'start infinity', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 day', 'infinity', 2, mechanism => 'binary')$$),
    ('source_running_counts', 'steps null', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 day', '2026-01-01', NULL, mechanism => 'binary')$$),
    ('source_running_counts', 'steps 0', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 day', '2026-01-01', 0, mechanism => 'binary')$$),
    ('source_running_counts', 'steps -1', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 day', '2026-01-01', -1, mechanism => 'binary')$$),
    ('source_running_counts', 'steps 2^63 - 1', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 day', '2026-01-01', 9223372036854775807, mechanism => 'binary')$$),
    ('source_running_counts', 'last step beyond timestamps', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '100000000 days', '2026-01-01', 2, mechanism => 'binary')$$),
    ('source_running_counts', 'mechanism unknown', $$SELECT * FROM contcount.source_running_counts('sw_src', 1, '1 day', '2026-01-01', 2, 'tree')$$),
    ('source_running_counts', 'epsilon NaN', $$SELECT * FROM contcount.source_running_counts('sw_src', 'NaN', '1 day', '2026-01-01', 2, mechanism => 'binary')$$),
    ('source_running_mean', 'source null', $$SELECT * FROM contcount.source_running_mean(NULL, 'v', contcount.mean_mechanism(0, 100, 1, 100, 10))$$),
    ('source_running_mean', 'value null', $$SELECT * FROM contcount.source_running_mean('sw_src', NULL, contcount.mean_mechanism(0, 100, 1, 100, 10))$$),
    ('source_running_mean', 'value not declared', $$SELECT * FROM contcount.source_running_mean('sw_src', 'u', contcount.mean_mechanism(0, 100, 1, 100, 10))$$),
    ('source_running_mean', 'mechanism null', $$SELECT * FROM contcount.source_running_mean('sw_src', 'v', NULL)$$),
    ('create_counter', 'name null', $$SELECT contcount.create_counter(NULL, 1, horizon => 10, mechanism => 'binary')$$),
    ('create_counter', 'name empty', $$SELECT contcount.create_counter('', 1, horizon => 10, mechanism => 'binary')$$),
    ('create_counter', 'name 64 bytes', $$SELECT contcount.create_counter(repeat('c', 64), 1, horizon => 10, mechanism => 'binary')$$),
    ('create_counter', 'name taken', $$SELECT contcount.create_counter('sw_c', 1, horizon => 10, mechanism => 'binary')$$),
    ('create_counter', 'epsilon NaN', $$SELECT contcount.create_counter('sw_new', 'NaN', horizon => 10, mechanism => 'binary')$$),
    ('create_counter', 'epsilon -Infinity', $$SELECT contcount.create_counter('sw_new', '-Infinity', horizon => 10, mechanism => 'binary')$$),
    ('create_counter', 'mechanism null', $$SELECT contcount.create_counter('sw_new', 1, NULL, horizon => 10)$$),
    ('create_counter', 'mechanism unknown', $$SELECT contcount.create_counter('sw_new', 1, 'tree', horizon => 10)$$),
    ('create_counter', 'horizon 0', $$SELECT contcount.create_counter('sw_new', 1, horizon => 0, mechanism => 'binary')$$),
    ('create_counter', 'step null', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, step => NULL, mechanism => 'binary')$$),
    ('create_counter', 'step 0', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, step => '0', mechanism => 'binary')$$),
    ('create_counter', 'step negative', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, step => '-1 minute', mechanism => 'binary')$$),
    ('create_counter', 'step half a second', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, step => '0.5 seconds', mechanism => 'binary')$$),
    ('create_counter', 'step a month', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, step => '1 month', mechanism => 'binary')$$),
    ('create_counter', 'step beyond int64', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, step => '200000000 days', mechanism => 'binary')$$),
    ('create_counter', 'step 2^62 us, horizon 2', $$SELECT contcount.create_counter('sw_new', 1, horizon => 2, step => '4611686018427 seconds 387904 microseconds', mechanism => 'binary')$$),
    ('create_counter', 'step 106751991 days, hybrid', $$SELECT contcount.create_counter('sw_new', 1, 'hybrid', step => '106751991 days')$$),
    ('create_counter', 'step 106751991 days, horizon 1', $$SELECT contcount.create_counter('sw_new', 1, horizon => 1, step => '106751991 days', mechanism => 'binary')$$),
    ('create_counter', 'horizon 2^62, step 1 second', $$SELECT contcount.create_counter('sw_new', 1, 'simple_ii', 4611686018427387904, '1 second')$$),
    ('create_counter', 'last step after 294276 AD', $$SELECT contcount.create_counter('sw_new', 1, horizon => 100000, step => '1100000 days', mechanism => 'binary')$$),
    ('create_counter', 'source unknown', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, source => 'sw_none', mechanism => 'binary')$$),
    ('create_counter', 'source and sensitivity', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, sensitivity => 2, source => 'sw_cnt', mechanism => 'binary')$$),
    ('create_counter', 'ledger unknown', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, ledger => 'sw_none', mechanism => 'binary')$$),
    ('create_counter', 'ledger not granted', $$SELECT contcount.create_counter('sw_new', 1, horizon => 10, ledger => 'sw_data', mechanism => 'binary')$$),
    ('drop_counter', 'null', $$SELECT contcount.drop_counter(NULL)$$),
    ('drop_counter', 'unknown', $$SELECT contcount.drop_counter('sw_none')$$),
    ('grant_counter', 'name null', $$SELECT contcount.grant_counter(NULL, 'regress_bad_dba')$$),
    ('grant_counter', 'role null', $$SELECT contcount.grant_counter('sw_c', NULL)$$),
    ('grant_counter', 'feed null', $$SELECT contcount.grant_counter('sw_c', 'regress_bad_dba', NULL)$$),
    ('grant_counter', 'unknown', $$SELECT contcount.grant_counter('sw_none', 'regress_bad_dba')$$),
    ('revoke_counter', 'role null', $$SELECT contcount.revoke_counter('sw_c', NULL)$$),
    ('revoke_counter', 'unknown', $$SELECT contcount.revoke_counter('sw_none', 'regress_bad_dba')$$),
    ('tick', 'null', $$SELECT contcount.tick(NULL)$$),
    ('tick', 'unknown', $$SELECT contcount.tick('sw_none')$$),
    ('current', 'null', $$SELECT * FROM contcount.current(NULL)$$),
    ('current', 'unknown', $$SELECT * FROM contcount.current('sw_none')$$),
    ('history', 'null', $$SELECT * FROM contcount.history(NULL)$$),
    ('history', 'unknown', $$SELECT * FROM contcount.history('sw_none')$$)
) AS cases(fn, label, s);
-- no refused call created anything or was charged: the analyst's ledger
-- paid for its counter and the five calls shown 'ok' only
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'sw%' ORDER BY name;
SELECT name FROM contcount.counters WHERE name LIKE 'sw%' ORDER BY name;
\c - postgres
SELECT name FROM contcount.ledgers WHERE name LIKE 'sw%' ORDER BY name;
SELECT name FROM contcount.sources WHERE name LIKE 'sw%' ORDER BY name;

-- superusers' functions: refused to others, and checked for superusers
SELECT fn, label, test.state_of(s) AS state FROM (VALUES
    ('counter_internals', 'null', $$SELECT * FROM contcount.counter_internals(NULL)$$),
    ('counter_internals', 'unknown', $$SELECT * FROM contcount.counter_internals('sw_none')$$),
    ('store_import', 'spent_units not the charges'' sum',
     $$SELECT contcount_internal.store_import(4545, 'x', now(), 10, 2, ARRAY[now()], ARRAY[10::oid], ARRAY[1::bigint], ARRAY[false], ARRAY['f'], ARRAY['s'], 'pure', ARRAY['pure'], ARRAY[1::bigint], ARRAY[1::bigint])$$),
    ('store_import', 'spent_units -1',
     $$SELECT contcount_internal.store_import(4545, 'x', now(), 10, -1, '{}', '{}', '{}', '{}', '{}', '{}', 'pure', '{}', '{}', '{}')$$),
    ('store_import_blocks', 'a block ending before it starts',
     $$SELECT contcount_internal.store_import_blocks((SELECT id FROM contcount.ledger WHERE name = 'sw_data'), ARRAY[now()], ARRAY[now() - interval '1 day'], ARRAY[1::bigint])$$),
    ('store_check_import', 'null', $$SELECT contcount_internal.store_check_import(NULL)$$)
) AS cases(fn, label, s);
SELECT contcount_internal.store_spent(4545) IS NULL AS nothing_stored;
\c - regress_bad_analyst
SELECT fn, test.state_of(s) AS state FROM (VALUES
    ('import_ledgers', $$SELECT * FROM contcount.import_ledgers('{}')$$),
    ('store_check_import', $$SELECT contcount_internal.store_check_import('{}')$$),
    ('counter_internals', $$SELECT * FROM contcount.counter_internals('sw_c')$$)
) AS cases(fn, s);
\c - postgres

-- A counter stored with a step whose schedule overflows (written by hand:
-- create_counter refuses it) takes no step on the clock: the worker never
-- reads it as due, where it used to close its steps back to back.  tick()
-- still closes one.
BEGIN;
SELECT contcount.create_counter('sw_stored', 1, 'hybrid', step => '1 minute');
UPDATE contcount.counter SET step = '106751991 days' WHERE name = 'sw_stored';
COMMIT;
SELECT contcount.tick('sw_stored');
SELECT pg_sleep(2);
SELECT steps FROM contcount.counters WHERE name = 'sw_stored';
SELECT contcount.drop_counter('sw_stored');

\c - regress_bad_analyst
SELECT contcount.drop_counter('sw_c');
\c - postgres
SELECT contcount.drop_source(name) FROM contcount.sources WHERE name LIKE 'sw%';
ALTER ROLE regress_bad_analyst RESET contcount.ledger;
DROP OWNED BY regress_bad_dba, regress_bad_analyst;
DROP ROLE regress_bad_dba, regress_bad_analyst;
