# Upgrading from 0.1 loses nothing (docs/design.md, "SQL objects and
# upgrades"): a database that holds ledgers, grants, charges, a dropped
# ledger, counters with releases and committed counts not yet in a step is
# updated from 0.1 to the control file's default_version.  Every budget,
# charge, release, exact count and state is the same after the update and
# after a restart; the next step releases exactly the pending counts without
# drawing earlier noise again; and the updated extension ends in the same
# objects as a fresh install, compared member by member without a list of
# what they should be.
#
# The library is the current one throughout, as after a DBA installs the
# new package: the 0.1 state is built through 0.1's SQL objects by the
# current code (which must therefore still serve a 0.1 database until it is
# updated), not by a library built from 0.1's sources.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
});
$node->start;

my $target = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'contcount'");
isnt($target, '0.1', "the control file's default_version ($target) is a later version than 0.1");

sub wait_for_worker
{
	return $node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'");
}

# ---------------------------------------------------------------------
# Real state at 0.1, built through 0.1's SQL objects by the current library:
# the window between installing a new package (and restarting, for
# shared_preload_libraries) and ALTER EXTENSION UPDATE, which a DBA goes
# through on every upgrade.  The library must work there, or at least not
# lose anything; if it refuses, this says so and stops.
# ---------------------------------------------------------------------
my $built = 1;

sub at_01
{
	my ($what, $sql) = @_;
	return unless $built;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	$built = is($ret, 0, "at 0.1, the current library $what");
	diag($err) unless $built;
	return;
}

at_01('creates ledgers and grants them', q{
    CREATE EXTENSION contcount VERSION '0.1';
    CREATE ROLE lead;
    CREATE ROLE analyst;
    CREATE TABLE events AS SELECT i, i % 3 AS n FROM generate_series(1, 40) i;
    GRANT SELECT ON events TO lead, analyst;

    SELECT contcount.create_ledger('marketing', 10);
    SELECT contcount.create_ledger('research', 5.5);
    SELECT contcount.create_ledger('retired', 2);
    SELECT contcount.grant_ledger('marketing', 'lead', admin => true);
    SELECT contcount.grant_ledger('research', 'analyst');
});
# the admin grants its own ledger on; every kind of release from both
# ledgers, by the roles and by a superuser
at_01('releases, charges and drops ledgers', q{
    SET ROLE lead;
    SELECT contcount.grant_ledger('marketing', 'analyst');
    SELECT contcount.alter_ledger('marketing', 12);
    SELECT contcount.noisy_count(0.125, 'marketing') FROM events;
    SELECT count(*) FROM contcount.running_counts(ARRAY(SELECT n FROM events ORDER BY i), 0.25,
        mechanism => 'two_level', ledger => 'marketing');
    RESET ROLE;
    SET ROLE analyst;
    SELECT contcount.noisy_count(0.5, 'research') FROM events;
    SELECT count(*) FROM contcount.running_counts(ARRAY[1, 0, 2, 1], 0.75, ledger => 'research', mechanism => 'binary');
    SELECT count(r) FROM (SELECT contcount.running_count(n,
            contcount.mechanism('binary', epsilon => 0.375, horizon => 40, ledger => 'marketing'))
        OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS r FROM events) s;
    RESET ROLE;
    SET contcount.ledger = 'research';
    SELECT (contcount.running_count(n, 0.0625, 40)).noisy_count FROM events;
    SET contcount.ledger = 'retired';
    SELECT contcount.noisy_count(0.5) FROM events;
    RESET contcount.ledger;
    SELECT contcount.drop_ledger('retired');
});
# counters: one owned by the ledger's admin, one by a superuser, fed by
# every form of the trigger
at_01('creates counters and grants one', q{
    SET ROLE lead;
    SELECT contcount.create_counter('signups', 1, horizon => 1000, step => '1 day',
        ledger => 'marketing', mechanism => 'binary');
    SELECT contcount.grant_counter('signups', 'analyst');
    RESET ROLE;
    SELECT contcount.create_counter('paid', 0.5, mechanism => 'hybrid', step => '1 day',
        ledger => 'research');
    CREATE TABLE signups (id serial, paid boolean NOT NULL DEFAULT false);
    CREATE TABLE signups_legacy (id serial);
    CREATE TRIGGER count_signups AFTER INSERT ON signups
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('signups');
    CREATE TRIGGER count_legacy AFTER INSERT ON signups_legacy
        REFERENCING NEW TABLE AS inserted
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('signups');
    CREATE TRIGGER count_paid AFTER INSERT ON signups
        FOR EACH ROW WHEN (NEW.paid) EXECUTE FUNCTION contcount.count_inserts('paid');
});
ok(wait_for_worker(), 'the step worker runs') if $built;
for my $step (1 .. 3)
{
	at_01("counts inserts and closes step $step", qq{
        INSERT INTO signups (paid) SELECT g % 2 = 0 FROM generate_series(1, 10 * $step) g;
        INSERT INTO signups_legacy SELECT FROM generate_series(1, $step);
        SELECT contcount.tick('signups'), contcount.tick('paid');
    });
}
# committed after the last step: pending, in no release yet
at_01('counts inserts after the last step', q{
    INSERT INTO signups (paid) SELECT true FROM generate_series(1, 7);
    INSERT INTO signups_legacy SELECT FROM generate_series(1, 4);
    BEGIN;
    INSERT INTO signups (paid) SELECT true FROM generate_series(1, 100);
    ROLLBACK;
});
unless ($built)
{
	done_testing();
	exit;
}

# ---------------------------------------------------------------------
# What a DBA cares about, as each role sees it.
# ---------------------------------------------------------------------
my @counters = ('signups', 'paid');
# the view's columns of 0.1 (0.5 adds accounting and rho)
my $counter_columns = 'name, mechanism, epsilon, horizon, step, ledger, started_at, steps, finished, owner';
my %views = (
	'ledgers (budget, spent, remaining), as a superuser' =>
	  'SELECT name, budget, spent, remaining, created_at FROM contcount.ledgers ORDER BY name',
	'ledgers, as the admin role' =>
	  'SET ROLE lead; SELECT name, budget, spent, remaining, created_at FROM contcount.ledgers ORDER BY name',
	'ledgers, as the plain grantee' =>
	  'SET ROLE analyst; SELECT name, budget, spent, remaining, created_at FROM contcount.ledgers ORDER BY name',
	'charges (the audit), as a superuser' =>
	  'SELECT at, role, ledger, epsilon, function, statement FROM contcount.charges ORDER BY at, ledger, function',
	'charges, as the admin role' =>
	  'SET ROLE lead; SELECT at, role, ledger, epsilon, function, statement FROM contcount.charges '
	  . 'ORDER BY at, ledger, function',
	'counters, as a superuser' => "SELECT $counter_columns FROM contcount.counters ORDER BY name",
	'counters, as the counter grantee' =>
	  "SET ROLE analyst; SELECT $counter_columns FROM contcount.counters ORDER BY name",
	'history of signups, as the counter grantee' =>
	  "SET ROLE analyst; SELECT * FROM contcount.history('signups') ORDER BY t",
	'current of signups, as the owner' => "SET ROLE lead; SELECT * FROM contcount.current('signups')",
	map {
		("history of $_" => "SELECT * FROM contcount.history('$_') ORDER BY t",
		 "internals of $_ (steps, exact_released, pending, state)" =>
		   "SELECT steps, exact_released, pending, octet_length(state), md5(state)
            FROM contcount.counter_internals('$_')")
	} @counters);

sub snapshot
{
	return { map { $_ => $node->safe_psql('postgres', $views{$_}) } keys %views };
}

sub internals
{
	my ($counter) = @_;
	my ($steps, $released, $pending) = split /\|/, $node->safe_psql('postgres',
		"SELECT steps, exact_released, pending FROM contcount.counter_internals('$counter')");
	return { steps => $steps, released => $released, pending => $pending };
}

my $before = snapshot();
my %internals = map { $_ => internals($_) } @counters;

# the state is what it should be, so that "unchanged" below means something
is($before->{'ledgers (budget, spent, remaining), as a superuser'} =~ s/\|[^|]*$//mgr,
	"marketing|12|1.75|10.25\nresearch|5.5|1.8125|3.6875",
	'0.1: both live ledgers hold their budgets and charges; the dropped one is gone');
is($before->{'ledgers, as the plain grantee'} =~ s/\|.*//mgr, "marketing\nresearch",
	'0.1: the plain grantee sees the two ledgers granted to it');
is($before->{'ledgers, as the admin role'} =~ s/\|.*//mgr, 'marketing',
	'0.1: the admin role sees its ledger');
my $superuser = $node->safe_psql('postgres', 'SELECT current_user');
is($node->safe_psql('postgres', q{
        SELECT string_agg(role || ' ' || ledger || ' ' || epsilon || ' ' || function, ', '
            ORDER BY at, ledger, function) FROM contcount.charges}),
	'lead marketing 0.125 noisy_count, lead marketing 0.25 running_counts, '
	  . 'analyst research 0.5 noisy_count, analyst research 0.75 running_counts, '
	  . "analyst marketing 0.375 running_count, $superuser research 0.0625 running_count, "
	  . "$superuser retired 0.5 noisy_count, lead marketing 1 create_counter, "
	  . "$superuser research 0.5 create_counter",
	'0.1: every release was charged and audited, the dropped ledger\'s charge too');
is($node->safe_psql('postgres', 'SET ROLE lead; SELECT string_agg(DISTINCT ledger, \',\') || \' \' || count(*) FROM contcount.charges'),
	'marketing 4', '0.1: the admin role sees the 4 charges to its ledger, and no other');
is($before->{'counters, as the counter grantee'} =~ s/\|.*//mgr, 'signups',
	'0.1: the counter grantee sees the counter granted to it');
is_deeply([ map { $internals{$_}{steps} } @counters ], [ 3, 3 ], '0.1: both counters closed 3 steps');
is($internals{signups}{released} + $internals{signups}{pending},
	$node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM signups) + (SELECT count(*) FROM signups_legacy)'),
	'0.1: every committed row of both tables counted once for signups');
is($internals{signups}{pending}, 11, '0.1: 11 rows committed after the last step are pending');
is($internals{paid}{pending}, 7, '0.1: and 7 for the row trigger with WHEN');
is($before->{'history of signups'} =~ tr/\n//, 2, '0.1: signups released 3 steps');

# ---------------------------------------------------------------------
# The update, a restart, and the next step.
# ---------------------------------------------------------------------
$node->safe_psql('postgres', "ALTER EXTENSION contcount UPDATE TO '$target'");
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'contcount'"),
	$target, "updated from 0.1 to $target");

my $after = snapshot();
is($after->{$_}, $before->{$_}, "after the update: $_ unchanged") for sort keys %views;
# the columns 0.5 added say what the ledgers of 0.1 are: pure, and each
# charge one release (this library records it whatever SQL it serves)
is($node->safe_psql('postgres', q{
        SELECT string_agg(DISTINCT concat_ws(' ', accounting, delta, spent_epsilon = spent), ', ')
        FROM contcount.ledgers}),
	'pure 0 t', 'after the update: every ledger pure, (spent, 0)-DP');
is($node->safe_psql('postgres', q{
        SELECT string_agg(DISTINCT concat_ws(' ', accounting, releases, release_epsilon = epsilon), ', ')
        FROM contcount.charges}),
	'pure 1 t', 'after the update: every charge one pure release of its epsilon');
is($node->safe_psql('postgres', q{
        SELECT string_agg(concat_ws(' ', name, accounting, rho IS NULL, epsilon), ', ' ORDER BY name)
        FROM contcount.counters}),
	'paid pure t 0.5, signups pure t 1', 'after the update: every counter pure, charged its epsilon');

$node->restart;
ok(wait_for_worker(), 'the step worker runs after the restart');
$after = snapshot();
is($after->{$_}, $before->{$_}, "after a restart: $_ unchanged") for sort keys %views;

for my $counter (@counters)
{
	my $step = $node->safe_psql('postgres', "SELECT contcount.tick('$counter')");
	my $old = $internals{$counter};
	is($step, $old->{steps} + 1, "$counter: the next step after the update is step " . ($old->{steps} + 1));
	is_deeply(internals($counter),
		{ steps => $old->{steps} + 1, released => $old->{released} + $old->{pending}, pending => 0 },
		"$counter: it released exactly the $old->{pending} rows pending since 0.1");
	my $history = $node->safe_psql('postgres',
		"SELECT * FROM contcount.history('$counter') ORDER BY t");
	my @rows = split /\n/, $history;
	is(scalar(@rows), $old->{steps} + 1, "$counter: one release more");
	is(join("\n", @rows[ 0 .. $#rows - 1 ]), $before->{"history of $counter"},
		"$counter: every earlier release as it was, none drawn again");
}

# the update keeps everything working: the triggers count, the grants spend
$node->safe_psql('postgres', 'INSERT INTO signups (paid) SELECT true FROM generate_series(1, 5)');
is(internals('signups')->{pending}, 5, 'after the update the statement trigger counts');
is(internals('paid')->{pending}, 5, 'and the row trigger');
$node->safe_psql('postgres',
	"SET ROLE analyst; SELECT contcount.noisy_count(0.25, 'marketing') FROM events");
is($node->safe_psql('postgres', "SELECT spent FROM contcount.ledgers WHERE name = 'marketing'"),
	'2', 'after the update the plain grantee spends from its ledger, and pays');
my ($ret, $out, $err) = $node->psql('postgres',
	"SET ROLE analyst; SELECT contcount.alter_ledger('marketing', 100)");
like($err, qr/permission denied for ledger "marketing"/, 'but still cannot manage it');
$node->safe_psql('postgres', "SET ROLE lead; SELECT contcount.alter_ledger('marketing', 13)");
is($node->safe_psql('postgres', "SELECT budget FROM contcount.ledgers WHERE name = 'marketing'"),
	'13', 'while the admin role still can');

# ---------------------------------------------------------------------
# The updated extension is a fresh install's.
# ---------------------------------------------------------------------

# Every member of the extension, with what defines it: one JSON object of
# member => { aspect => value }.  Privileges are compared as sets, a NULL
# ACL as the default it stands for.  Kinds without an aspect of their own
# here are compared by membership, comment and initial privileges.
my $members_sql = q{
CREATE FUNCTION pg_temp.acl(aclitem[]) RETURNS text LANGUAGE sql IMMUTABLE
    AS $$ SELECT coalesce(string_agg(a::text, ' ' ORDER BY a::text), '') FROM unnest($1) a $$;
WITH m AS (
    SELECT d.classid, d.objid, pg_describe_object(d.classid, d.objid, d.objsubid) AS member
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'contcount' AND d.deptype = 'e'
), fn AS (
    SELECT m.member, p.* FROM m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
), rel AS (
    SELECT m.member, c.oid AS reloid, c.* FROM m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
), typ AS (
    SELECT m.member, t.oid AS typoid, t.* FROM m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
), aspects(member, aspect, value) AS (
    SELECT member, 'kind', (pg_identify_object(classid, objid, 0)).type FROM m
  UNION ALL
    SELECT m.member, 'comments', string_agg(d.objsubid || ': ' || d.description, E'\n' ORDER BY d.objsubid)
    FROM m JOIN pg_description d ON d.classoid = m.classid AND d.objoid = m.objid GROUP BY m.member
  UNION ALL
    SELECT m.member, 'initial privileges',
           string_agg(format('%s %s %s', i.objsubid, i.privtype, pg_temp.acl(i.initprivs)), E'\n'
                      ORDER BY i.objsubid, i.privtype)
    FROM m JOIN pg_init_privs i ON i.classoid = m.classid AND i.objoid = m.objid GROUP BY m.member
  UNION ALL
    SELECT member, 'function definition',
           CASE WHEN prokind <> 'a' THEN pg_get_functiondef(oid) ELSE (
               SELECT jsonb_build_object(
                   'arguments', pg_get_function_arguments(a.aggfnoid),
                   'result', pg_get_function_result(a.aggfnoid),
                   'kind', a.aggkind, 'direct arguments', a.aggnumdirectargs,
                   'sfunc', a.aggtransfn::regprocedure, 'finalfunc', a.aggfinalfn::regprocedure,
                   'combinefunc', a.aggcombinefn::regprocedure,
                   'serialfunc', a.aggserialfn::regprocedure, 'deserialfunc', a.aggdeserialfn::regprocedure,
                   'msfunc', a.aggmtransfn::regprocedure, 'minvfunc', a.aggminvtransfn::regprocedure,
                   'mfinalfunc', a.aggmfinalfn::regprocedure,
                   'finalfunc_extra', a.aggfinalextra, 'mfinalfunc_extra', a.aggmfinalextra,
                   'finalfunc_modify', a.aggfinalmodify, 'mfinalfunc_modify', a.aggmfinalmodify,
                   'sortop', a.aggsortop::regoperator,
                   'stype', format_type(a.aggtranstype, NULL), 'sspace', a.aggtransspace,
                   'mstype', format_type(a.aggmtranstype, NULL), 'msspace', a.aggmtransspace,
                   'initcond', a.agginitval, 'minitcond', a.aggminitval,
                   'parallel', proparallel, 'volatile', provolatile, 'strict', proisstrict,
                   'security definer', prosecdef, 'config', proconfig, 'cost', procost)::text
               FROM pg_aggregate a WHERE a.aggfnoid = fn.oid) END
    FROM fn
  UNION ALL
    SELECT member, 'function acl', pg_temp.acl(coalesce(proacl, acldefault('f', proowner))) FROM fn
  UNION ALL
    SELECT member, 'owner', proowner::regrole::text FROM fn
  UNION ALL
    SELECT member, 'relation definition', jsonb_build_object(
               'kind', relkind, 'persistence', relpersistence, 'options', reloptions,
               'row security', relrowsecurity, 'forced row security', relforcerowsecurity,
               'replica identity', relreplident,
               'view', CASE WHEN relkind IN ('v', 'm') THEN pg_get_viewdef(reloid) END,
               'sequence', (SELECT jsonb_build_object('type', format_type(s.seqtypid, NULL),
                                'start', s.seqstart, 'increment', s.seqincrement, 'max', s.seqmax,
                                'min', s.seqmin, 'cache', s.seqcache, 'cycle', s.seqcycle)
                            FROM pg_sequence s WHERE s.seqrelid = reloid))::text
    FROM rel
  UNION ALL
    SELECT member, 'relation columns', (
        SELECT string_agg(format('%s %s%s%s%s%s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                   CASE WHEN a.attnotnull THEN ' not null' END,
                   ' default ' || pg_get_expr(ad.adbin, ad.adrelid),
                   ' generated ' || nullif(a.attgenerated::text, ''),
                   ' identity ' || nullif(a.attidentity::text, ''),
                   CASE WHEN a.attcollation <> t.typcollation THEN ' collate ' || a.attcollation::regcollation END,
                   ' acl ' || nullif(pg_temp.acl(a.attacl), '')), E'\n' ORDER BY a.attnum)
        FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
        WHERE a.attrelid = reloid AND a.attnum > 0 AND NOT a.attisdropped)
    FROM rel
  UNION ALL
    SELECT member, 'relation constraints', (
        SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), E'\n' ORDER BY conname)
        FROM pg_constraint WHERE conrelid = reloid)
    FROM rel
  UNION ALL
    SELECT member, 'relation indexes', (
        SELECT string_agg(pg_get_indexdef(indexrelid), E'\n' ORDER BY 1)
        FROM pg_index WHERE indrelid = reloid)
    FROM rel
  UNION ALL
    SELECT member, 'relation triggers, rules and policies', (
        SELECT string_agg(def, E'\n' ORDER BY def) FROM (
            SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = reloid AND NOT tgisinternal
            UNION ALL
            SELECT pg_get_ruledef(oid) FROM pg_rewrite WHERE ev_class = reloid AND rulename <> '_RETURN'
            UNION ALL
            SELECT format('policy %s %s %s to %s using %s check %s', polname, polcmd, polpermissive,
                          polroles::regrole[], pg_get_expr(polqual, polrelid), pg_get_expr(polwithcheck, polrelid))
            FROM pg_policy WHERE polrelid = reloid) d)
    FROM rel
  UNION ALL
    SELECT member, 'relation acl',
           pg_temp.acl(coalesce(relacl, acldefault(CASE relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", relowner)))
    FROM rel
  UNION ALL
    SELECT member, 'owner', relowner::regrole::text FROM rel
  UNION ALL
    SELECT member, 'type definition', jsonb_build_object(
               'type', typtype, 'category', typcategory, 'length', typlen, 'by value', typbyval,
               'align', typalign, 'storage', typstorage,
               'input', typinput::regprocedure, 'output', typoutput::regprocedure,
               'receive', typreceive::regprocedure, 'send', typsend::regprocedure,
               'base type', format_type(typbasetype, typtypmod), 'not null', typnotnull,
               'default', typdefault,
               'attributes', (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod),
                                                ', ' ORDER BY a.attnum)
                              FROM pg_attribute a
                              WHERE a.attrelid = typrelid AND a.attnum > 0 AND NOT a.attisdropped),
               'labels', (SELECT string_agg(enumlabel, ', ' ORDER BY enumsortorder)
                          FROM pg_enum WHERE enumtypid = typoid),
               'range', (SELECT format_type(rngsubtype, NULL) FROM pg_range WHERE rngtypid = typoid),
               'constraints', (SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), ', ' ORDER BY conname)
                               FROM pg_constraint WHERE contypid = typoid))::text
    FROM typ
  UNION ALL
    SELECT member, 'type acl', pg_temp.acl(coalesce(typacl, acldefault('T', typowner))) FROM typ
  UNION ALL
    SELECT member, 'owner', typowner::regrole::text FROM typ
  UNION ALL
    SELECT m.member, 'schema acl', pg_temp.acl(coalesce(n.nspacl, acldefault('n', n.nspowner)))
    FROM m JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid
  UNION ALL
    SELECT m.member, 'operator definition', jsonb_build_object(
               'kind', o.oprkind, 'left', format_type(o.oprleft, NULL), 'right', format_type(o.oprright, NULL),
               'result', format_type(o.oprresult, NULL), 'function', o.oprcode::regprocedure,
               'commutator', o.oprcom::regoperator, 'negator', o.oprnegate::regoperator,
               'restrict', o.oprrest::regprocedure, 'join', o.oprjoin::regprocedure,
               'merges', o.oprcanmerge, 'hashes', o.oprcanhash, 'owner', o.oprowner::regrole)::text
    FROM m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
  UNION ALL
    SELECT m.member, 'cast definition', jsonb_build_object(
               'function', c.castfunc::regprocedure, 'context', c.castcontext, 'method', c.castmethod)::text
    FROM m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
  UNION ALL
    SELECT 'extension contcount', 'kind', 'extension'
  UNION ALL
    SELECT 'extension contcount', 'extension', jsonb_build_object(
               'version', extversion, 'schema', extnamespace::regnamespace, 'owner', extowner::regrole,
               'schema owner', n.nspowner::regrole,
               'schema acl', pg_temp.acl(coalesce(n.nspacl, acldefault('n', n.nspowner))),
               'relocatable', extrelocatable,
               'configuration tables', (SELECT string_agg(t::regclass || ' ' || coalesce(c, ''), ', ' ORDER BY t::regclass::text)
                                        FROM unnest(extconfig, extcondition) u(t, c)))::text
    FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace WHERE extname = 'contcount'
)
SELECT jsonb_object_agg(member, aspects) FROM (
    SELECT member, jsonb_object_agg(aspect, value) AS aspects
    FROM aspects WHERE value IS NOT NULL GROUP BY member) s;
};

sub members
{
	my ($db) = @_;
	return decode_json($node->safe_psql($db, $members_sql));
}

# What differs between two sets of members: those only in the first, only
# in the second, and for each aspect the members whose values differ.
sub compare_members
{
	my ($got, $want) = @_;
	my @only_got = sort grep { !exists $want->{$_} } keys %$got;
	my @only_want = sort grep { !exists $got->{$_} } keys %$want;
	my %differ;
	for my $member (sort grep { exists $want->{$_} } keys %$got)
	{
		my %aspects = map { $_ => 1 } keys %{ $got->{$member} }, keys %{ $want->{$member} };
		for my $aspect (sort keys %aspects)
		{
			my ($g, $w) = ($got->{$member}{$aspect}, $want->{$member}{$aspect});
			push @{ $differ{$aspect} }, $member unless defined $g && defined $w && $g eq $w;
		}
	}
	return (\@only_got, \@only_want, \%differ);
}

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION contcount');
is($node->safe_psql('fresh', "SELECT extversion FROM pg_extension WHERE extname = 'contcount'"),
	$target, "a fresh install is $target");
my $fresh = members('fresh');
my $updated = members('postgres');

# the comparison sees what it should: every function and table has the
# aspects compared below
my @functions = grep { $fresh->{$_}{kind} =~ /^(function|aggregate|procedure)$/ } keys %$fresh;
my @tables = grep { $fresh->{$_}{kind} eq 'table' } keys %$fresh;
is(scalar(keys %$fresh) - 1, $node->safe_psql('fresh', q{
        SELECT count(*) FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
        WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'contcount' AND d.deptype = 'e'}),
	'every member of the fresh install is described');
cmp_ok(scalar(@functions), '>', 0, 'among them functions (' . scalar(@functions) . ')');
cmp_ok(scalar(@tables), '>', 0, 'and tables (' . scalar(@tables) . ')');
is_deeply([ grep { !defined $fresh->{$_}{'function definition'} || !defined $fresh->{$_}{'function acl'} } @functions ],
	[], 'every member function has a definition and an ACL to compare');
is_deeply([ grep { !defined $fresh->{$_}{'relation columns'} || !defined $fresh->{$_}{'relation acl'} } @tables ],
	[], 'every member table has columns and an ACL to compare');

# ... and finds a difference of each kind: a fresh install tampered with
my ($function) = sort grep { $fresh->{$_}{kind} eq 'function' } keys %$fresh;
my ($table) = sort @tables;
$node->safe_psql('postgres', 'CREATE DATABASE tampered');
my ($f, $t) = ($function =~ s/^function //r, $table =~ s/^table //r);
$node->safe_psql('tampered', qq{
    CREATE EXTENSION contcount;
    CREATE ROLE tamperer;
    ALTER FUNCTION $f COST 4321;
    GRANT EXECUTE ON FUNCTION $f TO tamperer;
    ALTER TABLE $t ADD COLUMN tampered int;
    GRANT SELECT ON $t TO tamperer;
    COMMENT ON TABLE $t IS 'tampered';
    CREATE FUNCTION contcount.tampered() RETURNS int LANGUAGE sql AS 'SELECT 1';
    ALTER EXTENSION contcount ADD FUNCTION contcount.tampered();
});
my ($extra, $missing, $differ) = compare_members(members('tampered'), $fresh);
is_deeply([ $extra, $missing, $differ ],
	[ ['function contcount.tampered()'], [],
	  { 'function definition' => [$function], 'function acl' => [$function],
		'relation columns' => [$table], 'relation acl' => [$table], comments => [$table] } ],
	'the comparison finds an added member, a changed function, function ACL, column, table ACL and comment');

# the real comparison: updated against fresh
($extra, $missing, $differ) = compare_members($updated, $fresh);
is_deeply($extra, [], 'the updated extension has no member a fresh install lacks');
is_deeply($missing, [], 'and lacks no member of a fresh install');
my %all_aspects = map { %$_ } values %$fresh, values %$updated;
for my $aspect (sort keys %all_aspects)
{
	my $differing = $differ->{$aspect} // [];
	is_deeply($differing, [], "updated and fresh agree on the $aspect of every member")
	  or diag(join "\n", map {
		"$_:\n  updated: " . ($updated->{$_}{$aspect} // '(none)')
		  . "\n  fresh:   " . ($fresh->{$_}{$aspect} // '(none)')
	  } @$differing);
}

done_testing();
