-- PostgreSQL 15's own catalog checks (the queries of its regression test
-- opr_sanity that bear on functions and aggregates), run on contcount's
-- functions and aggregates only.  Each query lists what the check flags:
-- no row, except where docs/catalog-checks.md says why a check does not
-- apply (then the rows are exactly those it explains).

CREATE VIEW test.members AS
SELECT d.objid AS oid FROM pg_depend d
WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'contcount') AND d.deptype = 'e';
SELECT count(*) > 60 AS checks_see_the_functions FROM test.members;

-- PostgreSQL's IsBinaryCoercible(), which opr_sanity's binary_coercible()
-- calls (contcount has no domain): the same type, any type to "any",
-- anyelement or anycompatible, a binary cast, an array to anyarray.
CREATE FUNCTION test.binary_coercible(oid, oid) RETURNS bool
LANGUAGE sql STRICT STABLE AS $$
SELECT $1 = $2 OR $2 IN ('"any"'::regtype, 'anyelement'::regtype, 'anycompatible'::regtype)
    OR EXISTS (SELECT FROM pg_cast WHERE castsource = $1 AND casttarget = $2 AND castmethod = 'b')
    OR ($2 = 'anyarray'::regtype AND EXISTS (SELECT FROM pg_type WHERE oid = $1 AND typelem <> 0 AND typlen = -1))
$$;

-- **************** pg_proc ****************

-- Illegal values.
SELECT p.oid::regprocedure AS illegal_values
FROM pg_proc p JOIN test.members USING (oid)
WHERE p.prolang = 0 OR p.prorettype = 0 OR p.pronargs < 0 OR p.pronargdefaults < 0
   OR p.pronargdefaults > p.pronargs OR array_lower(p.proargtypes, 1) <> 0
   OR array_upper(p.proargtypes, 1) <> p.pronargs - 1 OR 0::oid = ANY (p.proargtypes)
   OR p.procost <= 0 OR CASE WHEN p.proretset THEN p.prorows <= 0 ELSE p.prorows <> 0 END
   OR p.prokind NOT IN ('f', 'a', 'w', 'p') OR p.provolatile NOT IN ('i', 's', 'v')
   OR p.proparallel NOT IN ('s', 'r', 'u');

-- prosrc empty without a SQL body; proretset on anything but a function;
-- pronargdefaults without proargdefaults; probin for C functions only.
SELECT p.oid::regprocedure AS bad_source_or_defaults
FROM pg_proc p JOIN test.members USING (oid)
WHERE p.prosrc IS NULL OR ((p.prosrc = '' OR p.prosrc = '-') AND p.prosqlbody IS NULL)
   OR (p.proretset AND p.prokind <> 'f')
   OR (p.pronargdefaults <> 0) <> (p.proargdefaults IS NOT NULL)
   OR (p.prolang = 13 AND (p.probin IS NULL OR p.probin = '' OR p.probin = '-'))
   OR (p.prolang <> 13 AND p.probin IS NOT NULL);

-- A function returning internal must take internal: otherwise SQL could
-- call it with anything.
SELECT p.oid::regprocedure AS internal_without_internal_argument
FROM pg_proc p JOIN test.members USING (oid)
WHERE p.prorettype = 'internal'::regtype AND NOT 'internal'::regtype = ANY (p.proargtypes);

-- A polymorphic result needs a polymorphic argument to resolve it.
SELECT p.oid::regprocedure AS unresolvable_polymorphic_result
FROM pg_proc p JOIN test.members USING (oid)
WHERE p.prorettype IN ('anyelement'::regtype, 'anyarray'::regtype, 'anynonarray'::regtype, 'anyenum'::regtype,
                       'anycompatible'::regtype, 'anycompatiblearray'::regtype)
  AND NOT p.proargtypes::oid[] && ARRAY['anyelement'::regtype, 'anyarray'::regtype, 'anynonarray'::regtype,
                                        'anyenum'::regtype, 'anyrange'::regtype, 'anymultirange'::regtype,
                                        'anycompatible'::regtype, 'anycompatiblearray'::regtype]::oid[];

-- cstring arguments or results belong to type input and output functions.
SELECT p.oid::regprocedure AS cstring_function
FROM pg_proc p JOIN test.members USING (oid)
WHERE 'cstring'::regtype = ANY (p.proargtypes) OR p.prorettype = 'cstring'::regtype;

-- The argument-info arrays agree with each other and with proargtypes.
SELECT p.oid::regprocedure AS inconsistent_argument_arrays
FROM pg_proc p JOIN test.members USING (oid)
WHERE array_length(p.proallargtypes, 1) < array_length(p.proargtypes, 1)
   OR array_length(p.proargmodes, 1) < array_length(p.proargtypes, 1)
   OR array_length(p.proargnames, 1) < array_length(p.proargtypes, 1)
   OR array_length(p.proallargtypes, 1) <> array_length(p.proargmodes, 1)
   OR array_length(p.proallargtypes, 1) <> array_length(p.proargnames, 1)
   OR array_length(p.proargmodes, 1) <> array_length(p.proargnames, 1)
   OR (p.proallargtypes IS NOT NULL AND
       ARRAY(SELECT unnest(p.proargtypes)) <>
       ARRAY(SELECT p.proallargtypes[i] FROM generate_series(1, array_length(p.proallargtypes, 1)) g(i)
             WHERE p.proargmodes IS NULL OR p.proargmodes[i] IN ('i', 'b', 'v')))
   OR ((p.proargmodes IS NOT NULL AND 'v' = ANY (p.proargmodes)) IS DISTINCT FROM (p.provariadic <> 0));

-- Every IMMUTABLE function is PARALLEL SAFE.
SELECT p.oid::regprocedure AS immutable_but_parallel_unsafe
FROM pg_proc p JOIN test.members USING (oid)
WHERE p.provolatile = 'i' AND p.proparallel = 'u';

-- **************** pg_aggregate ****************

-- Illegal values, and the aggregate's pg_proc row.
SELECT a.aggfnoid::regprocedure AS bad_aggregate_row
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid JOIN test.members m ON m.oid = a.aggfnoid
WHERE a.aggtransfn = 0 OR a.aggkind NOT IN ('n', 'o', 'h') OR a.aggnumdirectargs < 0
   OR (a.aggkind = 'n' AND a.aggnumdirectargs > 0) OR a.aggfinalmodify NOT IN ('r', 's', 'w')
   OR a.aggmfinalmodify NOT IN ('r', 's', 'w') OR a.aggtranstype = 0 OR a.aggtransspace < 0
   OR a.aggmtransspace < 0 OR p.prokind <> 'a' OR p.proretset OR p.pronargs < a.aggnumdirectargs
   OR (a.aggfinalfn = 0 AND p.prorettype <> a.aggtranstype);

-- The transition function takes the state and then the aggregate's
-- arguments, every one of them (opr_sanity compares the first four and
-- flags any aggregate with more: see docs/catalog-checks.md).
SELECT a.aggfnoid::regprocedure AS aggregate, t.oid::regprocedure AS transition_function_that_does_not_match
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid JOIN pg_proc t ON t.oid = a.aggtransfn
JOIN test.members m ON m.oid = a.aggfnoid
WHERE t.proretset OR t.pronargs <> p.pronargs + 1
   OR NOT test.binary_coercible(t.prorettype, a.aggtranstype)
   OR NOT test.binary_coercible(a.aggtranstype, t.proargtypes[0])
   OR EXISTS (SELECT FROM generate_series(0, p.pronargs - 1) i
              WHERE NOT test.binary_coercible(p.proargtypes[i], t.proargtypes[i + 1]));

-- The final function takes the state (and, with FINALFUNC_EXTRA, the
-- arguments) and returns the aggregate's type.
SELECT a.aggfnoid::regprocedure AS aggregate, f.oid::regprocedure AS final_function_that_does_not_match
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid JOIN pg_proc f ON f.oid = a.aggfinalfn
JOIN test.members m ON m.oid = a.aggfnoid
WHERE f.proretset OR NOT test.binary_coercible(f.prorettype, p.prorettype)
   OR NOT test.binary_coercible(a.aggtranstype, f.proargtypes[0])
   OR CASE WHEN a.aggfinalextra THEN f.pronargs <> p.pronargs + 1 ELSE f.pronargs <> a.aggnumdirectargs + 1 END;

-- A strict transition function needs an initial state, or inputs of the
-- state's type.
SELECT a.aggfnoid::regprocedure AS strict_transition_without_initial_state
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid JOIN pg_proc t ON t.oid = a.aggtransfn
JOIN test.members m ON m.oid = a.aggfnoid
WHERE t.proisstrict AND a.agginitval IS NULL AND NOT test.binary_coercible(p.proargtypes[0], a.aggtranstype);

-- Moving-aggregate, combine and serialization functions: set together, or
-- not at all (contcount sets none).
SELECT a.aggfnoid::regprocedure AS inconsistent_support_functions
FROM pg_aggregate a JOIN test.members m ON m.oid = a.aggfnoid
WHERE (a.aggmtranstype <> 0 AND (a.aggmtransfn = 0 OR a.aggminvtransfn = 0))
   OR (a.aggmtranstype = 0 AND (a.aggmtransfn <> 0 OR a.aggminvtransfn <> 0 OR a.aggmfinalfn <> 0
                                OR a.aggmtransspace <> 0 OR a.aggminitval IS NOT NULL))
   OR ((a.aggserialfn <> 0 OR a.aggdeserialfn <> 0)
       AND (a.aggtranstype <> 'internal'::regtype OR a.aggcombinefn = 0 OR a.aggserialfn = 0 OR a.aggdeserialfn = 0))
   OR (a.aggcombinefn <> 0 AND a.aggtranstype = 'internal'::regtype
       AND (SELECT proisstrict FROM pg_proc WHERE oid = a.aggcombinefn));

-- Aggregates sharing a transition function share their combine and
-- serialization functions (noisy_count(epsilon) shares count(*)'s).
SELECT a.aggfnoid::regprocedure, b.aggfnoid::regprocedure AS sharing_a_transition_function_but_not_the_rest
FROM pg_aggregate a JOIN pg_aggregate b ON a.aggtransfn = b.aggtransfn AND a.aggfnoid <> b.aggfnoid
WHERE a.aggfnoid IN (SELECT oid FROM test.members)
  AND (a.aggcombinefn <> b.aggcombinefn OR a.aggserialfn <> b.aggserialfn OR a.aggdeserialfn <> b.aggdeserialfn);

-- No aggregate with defaults, nor a variadic one (a misplaced ORDER BY).
SELECT p.oid::regprocedure AS aggregate_with_defaults_or_variadic
FROM pg_proc p JOIN test.members USING (oid)
WHERE p.prokind = 'a' AND (p.proargdefaults IS NOT NULL OR p.provariadic <> 0);

-- Aggregates of one name with different numbers of arguments: opr_sanity
-- flags them, since f(a, b ORDER BY c) and f(a ORDER BY b, c) differ by
-- where a comma goes.  contcount keeps these three pairs; each misplaced
-- ORDER BY is an error or releases the same way (docs/catalog-checks.md
-- and the queries below).  Any other pair shows up here.
SELECT p1.oid::regprocedure AS aggregate, p2.oid::regprocedure AS overload_with_other_arity
FROM pg_proc p1 JOIN pg_proc p2 ON p1.oid < p2.oid AND p1.proname = p2.proname
WHERE p1.prokind = 'a' AND p2.prokind = 'a' AND array_dims(p1.proargtypes) <> array_dims(p2.proargtypes)
  AND (p1.oid IN (SELECT oid FROM test.members) OR p2.oid IN (SELECT oid FROM test.members))
ORDER BY 1, 2;
-- The comma moved into ORDER BY: running_count and running_mean have no
-- overload with fewer arguments, so the slip is an error, not another
-- aggregate.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.running_count(n ORDER BY contcount.mechanism('binary', 1, horizon => 8), i) FROM (VALUES (1, 1::bigint)) v(i, n)$$),
    ($$SELECT contcount.running_count(n, 1 ORDER BY 8, i) FROM (VALUES (1, 1::bigint)) v(i, n)$$),
    ($$SELECT contcount.running_mean(0.5, i ORDER BY contcount.mean_mechanism(0, 1, 1, 16, 4), i) FROM generate_series(1, 2) i$$),
    ($$SELECT contcount.running_mean(0.5, i, 0, 1, 1, 16 ORDER BY 4, i) FROM generate_series(1, 2) i$$)) v(s);
-- noisy_count's one-argument form would take noisy_count(epsilon ORDER BY
-- ledger): a count has no order, so noisy_count refuses any ORDER BY, and
-- charges nothing.
SELECT spent AS before FROM contcount.ledgers WHERE name = 'tests' \gset
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.noisy_count(1 ORDER BY 'tests') FROM generate_series(1, 2) i$$),
    ($$SELECT contcount.noisy_count(1, 'tests' ORDER BY i) FROM generate_series(1, 2) i$$)) v(s);
SELECT spent = :before AS nothing_charged FROM contcount.ledgers WHERE name = 'tests';
