-- Run in a single-user backend under valgrind by test/run: every path of
-- contcount that runs in a backend (shared memory, ledger store, trigger,
-- pending counts, releases) but the step worker, which single-user mode
-- does not start.
CREATE EXTENSION contcount;
SELECT contcount.create_ledger('vg', 100);
SET contcount.ledger = 'vg';
SELECT contcount.create_counter('c', 1, horizon => 1000, step => '1 day', mechanism => 'binary');
CREATE TABLE t (i int);
CREATE TRIGGER tc AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('c');
CREATE TABLE s (i int);
CREATE TRIGGER sc AFTER INSERT ON s REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('c');
CREATE TABLE u (i int PRIMARY KEY);
CREATE TRIGGER uc AFTER INSERT ON u FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('c');
INSERT INTO t SELECT generate_series(1, 100);
INSERT INTO s SELECT generate_series(1, 100);
INSERT INTO u SELECT generate_series(1, 100);
COPY u FROM PROGRAM 'seq 101 110';
DO $$ BEGIN INSERT INTO u VALUES (1) ON CONFLICT (i) DO UPDATE SET i = 1; EXCEPTION WHEN feature_not_supported THEN NULL; END $$;
SELECT * FROM contcount.counter_internals('c');
SELECT count(*) FROM contcount.running_counts(ARRAY(SELECT generate_series(1,300)::bigint), 0.5, mechanism => 'hybrid');
SELECT contcount.noisy_count(0.5) FROM t;
SELECT count(r) FROM (SELECT contcount.running_count(i, 0.5, 1000) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) r FROM t) x;
-- every group pays, in batches with a refund; parameters read once per call site
SELECT count(n) FROM (SELECT contcount.noisy_count(0.01, 'vg') AS n FROM t GROUP BY i % 37) x;
SELECT count(r) FROM (SELECT contcount.running_count(i, contcount.mechanism('binary', 0.01, 1000)) OVER (PARTITION BY i % 5 ORDER BY i ROWS UNBOUNDED PRECEDING) r FROM t) x;
DO $$ BEGIN PERFORM contcount.noisy_count(i) FROM t; EXCEPTION WHEN invalid_parameter_value THEN NULL; END $$;
-- running_mean: text units, levels clamped around medians, buffers emptied
SELECT contcount.create_ledger('vg_mean', 2000);
SELECT count(r) FROM (SELECT contcount.running_mean(i % 7 / 6.0, 'u' || (i - 1) / 2048, contcount.mean_mechanism(0, 1, 1000, 6144, 2048, units => 3, ledger => 'vg_mean')) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) r FROM generate_series(1, 6144) i) x;
SELECT count(r) FROM (SELECT contcount.running_mean(i % 7 / 6.0, i % 5, contcount.mean_mechanism(0, 1, 1, 100, 8, algorithm => 'naive', ledger => 'vg_mean')) OVER (PARTITION BY i % 2 ORDER BY i ROWS UNBOUNDED PRECEDING) r FROM t) x;
SELECT contcount.alter_ledger('vg', 200);
SELECT count(*) FROM contcount.budget_changes;
SELECT * FROM contcount.ledgers;
SELECT count(*) FROM contcount.charges;
-- the store's export and import: a ledger it knows is kept, or raised by a later export (one more charge)
SELECT count(*) FROM contcount.import_ledgers(contcount.export_ledgers());
SELECT * FROM contcount.import_ledgers((SELECT jsonb_set(e, '{ledgers,0}', l || jsonb_build_object('spent_units', (l ->> 'spent_units')::bigint + 1000, 'charges', (l -> 'charges') || jsonb_build_array(jsonb_build_object('at', now(), 'role', current_user, 'units', 1000, 'refund', false, 'accounting', l ->> 'accounting', 'releases', 1, 'release_units', 1000, 'function', 'vg', 'statement', 'vg')))) FROM (SELECT e, e #> '{ledgers,0}' AS l FROM contcount.export_ledgers() e) x));
-- a zCDP ledger: pure releases at epsilon^2/2 of rho, in batches; (epsilon, delta) in the view
SELECT contcount.create_ledger('vg_z', rho => 10, delta => 0.000001);
SELECT contcount.noisy_count(0.5, 'vg_z') FROM t;
SELECT count(n) FROM (SELECT contcount.noisy_count(0.01, 'vg_z') AS n FROM t GROUP BY i % 37) x;
SELECT contcount.alter_ledger('vg_z', rho => 20, delta => 0.001);
SELECT * FROM contcount.ledgers;
SELECT count(*) FROM contcount.charges WHERE release_epsilon IS NOT NULL;
SELECT count(*) FROM contcount.import_ledgers(contcount.export_ledgers());
-- Gaussian releases: checked against the ledger, charged rho; a counter; refused by a pure ledger
SELECT count(*) FROM contcount.running_counts(ARRAY(SELECT generate_series(1,300)::bigint), mechanism => 'blt', rho => 0.5, ledger => 'vg_z');
SELECT count(r) FROM (SELECT contcount.running_count(i, contcount.mechanism('gaussian_honaker', rho => 0.01, horizon => 1000, ledger => 'vg_z')) OVER (PARTITION BY i % 5 ORDER BY i ROWS UNBOUNDED PRECEDING) r FROM t) x;
SELECT contcount.create_counter('g', mechanism => 'auto', rho => 0.5, horizon => 1000, step => '1 day', ledger => 'vg_z');
SELECT * FROM contcount.counters;
DO $$ BEGIN PERFORM count(*) FROM contcount.running_counts(ARRAY[1], mechanism => 'blt', rho => 0.5); EXCEPTION WHEN SQLSTATE 'ZB003' THEN NULL; END $$;
-- privacy curves: every epsilon kept for the statement, then another ledger
SELECT max(contcount.ledger_delta('vg_z', e / 10.0)) FROM generate_series(0, 50) e;
SELECT contcount.ledger_epsilon('vg', 0.000001), contcount.ledger_epsilon('vg_z', 0.000001);
-- a protected source: declared, released from per key and per step
CREATE TABLE visits (person int, region text, at timestamptz);
INSERT INTO visits SELECT i % 37, (ARRAY['n', 's'])[1 + i % 2], '2026-01-01'::timestamptz + i * interval '1 hour' FROM generate_series(1, 300) i;
SELECT contcount.create_ledger('vg_data', 10);
SELECT contcount.create_ledger('vg_team', 10);
SELECT contcount.protect_table('visits', 'visits', 'person', 'at', 'vg_data', max_rows => 3, max_groups => 2);
SELECT contcount.source_dimension('visits', 'region', ARRAY['n', 's', 'e']);
SELECT count(*) FROM contcount.source_counts('visits', 0.5, 'region', ledger => 'vg_team');
SELECT count(*) FROM contcount.source_running_counts('visits', 0.5, '1 day', '2026-01-01', 10, dimension => 'region', ledger => 'vg_team', mechanism => 'binary');
-- a running mean of a declared column, through the owner's cursor
SELECT contcount.source_mean_value('visits', 'person');
SELECT count(mean) FROM contcount.source_running_mean('visits', 'person', contcount.mean_mechanism(0, 40, 0.5, 300, 16, ledger => 'vg_team'));
SELECT contcount.protect_table('visits_z', 'visits', 'person', 'at', 'vg_z', max_rows => 3);
SELECT count(*) FROM contcount.source_running_counts('visits_z', NULL, '1 day', '2026-01-01', 10, mechanism => 'blt', ledger => 'vg_z', rho => 0.25);
DO $$ BEGIN PERFORM count(*) FROM contcount.source_running_counts('visits', NULL, '1 day', '2026-01-01', 10, mechanism => 'blt', ledger => 'vg_team', rho => 0.25); EXCEPTION WHEN SQLSTATE 'ZB003' THEN NULL; END $$;
-- sliding windows, both constructions; streaming composition from a mechanism's curve
SELECT count(*) FROM contcount.window_counts(ARRAY(SELECT (i % 7)::bigint FROM generate_series(1, 500) i), 30, 0.5, 'tree', ledger => 'vg_team');
SELECT count(*) FROM contcount.window_counts(ARRAY(SELECT (i % 7)::bigint FROM generate_series(1, 500) i), 30, 0.5, 'auto', ledger => 'vg_team');
SELECT count(*) FROM contcount.window_counts(ARRAY(SELECT (i % 7)::bigint FROM generate_series(1, 500) i), 30, 0.5, 'difference', ledger => 'vg_team');
SELECT * FROM contcount.streaming_composition(contcount.mechanism('gaussian_honaker', rho => 0.5, horizon => 64), 0.000001, 10, 3);
-- per-block budgets: declared, charged over steps and over the retention,
-- refused, shown, audited, exported and imported (a source with blocks is
-- the only source over its rows: visits_z goes first)
SELECT contcount.drop_source('visits_z');
SELECT contcount.source_blocks('visits', '1 day', 5, '3650 days');
SELECT count(*) FROM contcount.source_running_counts('visits', 0.5, '1 day', '2026-01-01', 10, dimension => 'region', ledger => 'vg_team', mechanism => 'binary');
SELECT count(*) FROM contcount.source_counts('visits', 0.5, ledger => 'vg_team');
DO $$ BEGIN PERFORM count(*) FROM contcount.source_running_counts('visits', 5, '1 day', '2026-01-01', 2, ledger => 'vg_team', mechanism => 'binary'); EXCEPTION WHEN SQLSTATE 'ZB001' THEN NULL; END $$;
SELECT count(*), sum(spent) FROM contcount.blocks;
SELECT count(*) FROM contcount.block_charges;
SELECT contcount.source_expired_rows('visits');
SELECT count(*) FROM contcount.import_ledgers(contcount.export_ledgers());
-- a counter over the blocks: the blocks of its first step paid; rows in
-- them, in the future and without a time through its trigger
SELECT contcount.create_counter('vb', 0.5, horizon => 100, step => '1 day', ledger => 'vg_team', source => 'visits', mechanism => 'binary');
INSERT INTO visits VALUES (1, 'n', now()), (2, 's', now() + interval '10 days'), (3, 'n', NULL);
SELECT pending FROM contcount.counter_internals('vb');
SELECT contcount.drop_counter('vb');
SELECT contcount.drop_counter('g');
SELECT contcount.drop_counter('c');
