-- Every object of the extension says in psql (\df+, \dv+, \dT+, \dt+)
-- what it is for, and the support functions no user calls live in a
-- schema of their own, which the users of the aggregates need no right on.

-- Every member of the extension has a comment: no row, or the ones missing.
SELECT pg_describe_object(d.classid, d.objid, 0) AS without_comment
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'contcount')
  AND d.deptype = 'e'
  AND obj_description(d.objid, d.classid::regclass::name) IS NULL
ORDER BY 1;

-- One line each.
SELECT pg_describe_object(d.classid, d.objid, 0) AS comment_of_several_lines
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'contcount')
  AND d.deptype = 'e'
  AND obj_description(d.objid, d.classid::regclass::name) ~ '\n'
ORDER BY 1;

-- The support functions are in contcount_internal, each saying so, and no
-- function of contcount is one of them.
SELECT p.oid::regprocedure AS support_function, obj_description(p.oid, 'pg_proc') LIKE 'internal: %' AS says_internal
FROM pg_proc p WHERE p.pronamespace = 'contcount_internal'::regnamespace ORDER BY 1;
SELECT p.oid::regprocedure AS left_in_contcount
FROM pg_proc p
WHERE p.pronamespace = 'contcount'::regnamespace
  AND (p.oid IN (SELECT aggtransfn FROM pg_aggregate UNION SELECT aggfinalfn FROM pg_aggregate)
       OR (p.prorettype = 'trigger'::regtype AND p.proname <> 'count_inserts'));
-- The schema belongs to the extension; PUBLIC has no right on it, nor on
-- its functions.
SELECT nspname, pg_describe_object(d.refclassid, d.refobjid, 0) AS member_of,
       nspacl IS NULL OR NOT EXISTS (SELECT FROM aclexplode(nspacl) a WHERE a.grantee = 0) AS closed_to_public
FROM pg_namespace n JOIN pg_depend d ON d.classid = 'pg_namespace'::regclass AND d.objid = n.oid
WHERE nspname = 'contcount_internal' AND d.deptype = 'e';
SELECT p.oid::regprocedure AS executable_by_public
FROM pg_proc p
WHERE p.pronamespace = 'contcount_internal'::regnamespace
  AND (p.proacl IS NULL OR EXISTS (SELECT FROM aclexplode(p.proacl) a
                                   WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'));

-- A role that is not a superuser, with a ledger of its own and no right on
-- contcount_internal, calls every aggregate whose support functions moved:
-- PostgreSQL checks EXECUTE on them as the aggregate's owner, not as the
-- caller, and looks them up by oid.
CREATE ROLE regress_commenter;
SELECT contcount.create_ledger('commenter', 1000);
SELECT contcount.grant_ledger('commenter', 'regress_commenter');
GRANT USAGE ON SCHEMA test TO regress_commenter;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_commenter;
SET contcount.ledger = 'commenter';
SET SESSION AUTHORIZATION regress_commenter;
SELECT has_schema_privilege('contcount_internal', 'USAGE') AS usage_on_internal;
SELECT count(r) AS running_count_plain,
       count(r) FILTER (WHERE (r).t = 10) AS last_step
FROM (SELECT contcount.running_count(1::bigint, 1, 16) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS r
      FROM generate_series(1, 10) i) s;
SELECT (contcount.running_count(1::bigint, contcount.mechanism('binary', 1, horizon => 16) ORDER BY i)).t
       AS running_count_ordered
FROM generate_series(1, 10) i;
SELECT contcount.noisy_count(1) IS NOT NULL AS noisy_count,
       contcount.noisy_count(1, 'commenter') IS NOT NULL AS noisy_count_ledger
FROM generate_series(1, 10) i;
SELECT (contcount.running_mean(0.5, i, contcount.mean_mechanism(0, 1, 1, 16, 4) ORDER BY i)).t AS running_mean,
       (contcount.running_mean(0.5, i, 0, 1, 1, 16, 4 ORDER BY i)).t AS running_mean_parameters
FROM generate_series(1, 10) i;
-- The support functions themselves are out of its reach.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount_internal.noisy_count_final(1000)$$),
    ($$SELECT contcount_internal.running_count_final(NULL)$$)) v(s);
RESET SESSION AUTHORIZATION;
SELECT name, spent > 0 AS charged FROM contcount.ledgers WHERE name = 'commenter';
RESET contcount.ledger;
