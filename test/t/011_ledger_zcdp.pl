# Ledgers that account in zCDP (issue 13), through WAL like any ledger:
# - a zCDP ledger's creation and charges (pure releases at ceil(eps^2/2) of
#   rho, batches with their refund) reach a streaming standby, which shows
#   the same ledgers (accounting, rho, (epsilon, delta)) and the same audit
#   (each release's epsilon) and refuses releases; kill -9 of the primary
#   under wal_consistency_checking loses none of it; the promoted standby
#   has every charge and spends exactly the rho that remains;
# - a store written by contcount 0.4 (test/t/data/ledger-store-0.4, items
#   without accounting) is read by this library as pure, taken back by name,
#   and goes on receiving items of the new format on the same page, across
#   a restart and kill -9;
# - a ledger's accounting never changes: not by creating its name again
#   after a dropped extension, not by an import (ZB003); export and import
#   carry it between clusters; a database still at 0.4 refuses a version 2
#   export rather than take a zCDP ledger in as pure.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $fixture = abs_path(dirname(__FILE__)) . '/data/ledger-store-0.4';
my $ledgers_sql = 'SELECT name, budget, spent, remaining, created_at, accounting, delta, '
  . 'spent_epsilon, budget_epsilon FROM contcount.ledgers ORDER BY name';
my $charges_sql = 'SELECT * FROM contcount.charges ORDER BY at, ledger, epsilon, statement';

# A query's output, or its error with its SQLSTATE.
sub query
{
	my ($node, $sql, $db) = @_;
	my ($ret, $out, $err) = $node->psql($db // 'postgres', "\\set VERBOSITY verbose\n$sql");
	return $ret == 0 ? $out : "failed: $err";
}

sub ledger
{
	my ($node, $name, $columns) = @_;
	return query($node, "SELECT $columns FROM contcount.ledgers WHERE name = '$name'");
}

# One release of epsilon from a ledger: the value, or the error with its
# SQLSTATE ("ERROR:  ZB001: ...").
sub release
{
	my ($node, $epsilon, $ledger) = @_;
	return query($node, "SELECT contcount.noisy_count($epsilon, '$ledger') IS NOT NULL FROM events");
}

sub same_views
{
	my ($node, $other, $what) = @_;
	is(query($other, $ledgers_sql), query($node, $ledgers_sql), "$what: contcount.ledgers equal");
	is(query($other, $charges_sql), query($node, $charges_sql), "$what: contcount.charges equal");
	return;
}

# ---------------------------------------------------------------------
# 1. Replication, crash and promotion.
# ---------------------------------------------------------------------
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'contcount'\nwal_consistency_checking = 'contcount'");
$primary->start;
$primary->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    CREATE TABLE events AS SELECT i FROM generate_series(1, 20) i;
    SELECT contcount.create_ledger('z', rho => 0.5, delta => 0.001);
    -- epsilon 0.25: rho 1/32, twice
    SELECT count(*) FROM contcount.running_counts(ARRAY[1, 2], 0.25, ledger => 'z', mechanism => 'binary');
    SELECT contcount.noisy_count(0.25, 'z') FROM events;
});
is(ledger($primary, 'z', 'accounting, budget, spent, spent_epsilon'), 'zcdp|0.5|0.0625|1.030227597',
	'primary: two releases of epsilon 0.25 cost rho 1/16, (1.030227597, 0.001)-DP');

$primary->backup('streaming');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'streaming', has_streaming => 1);
$standby->start;

# after the base backup: a batch with a refund, and a new zCDP ledger
$primary->safe_psql('postgres', q{
    SELECT count(n) FROM (SELECT contcount.noisy_count(0.0625, 'z') n FROM events GROUP BY i % 5) s;
    SELECT contcount.create_ledger('late', rho => 0.01, delta => 0.000001);
    SELECT contcount.noisy_count(0.1, 'late') FROM events;
});
# 5 releases of epsilon 1/16: rho 1/512 each, paid 1 + 2 + 4, 2 given back
is(ledger($primary, 'z', 'spent'), '0.072265625', 'primary: spent 1/16 + 5/512 of rho');
is(query($primary, q{SELECT string_agg(concat_ws(' ', epsilon, function, releases, release_epsilon), ', '
        ORDER BY at) FROM contcount.charges WHERE ledger = 'z'}),
	'0.03125 running_counts 1 0.25, 0.03125 noisy_count 1 0.25, 0.001953125 noisy_count 1 0.0625, '
	  . '0.00390625 noisy_count, 2 releases 2 0.0625, 0.0078125 noisy_count, 4 releases 4 0.0625, '
	  . '-0.00390625 noisy_count, 2 unused 2 0.0625',
	'primary: the audit has each charge\'s rho and its releases\' epsilon');
$primary->wait_for_catchup($standby);
same_views($primary, $standby, 'standby');
like(release($standby, '0.1', 'z'), qr/ERROR:  25006:/, 'standby: releases refused (25006)');

ContcountTest::kill9_postmaster_and_start($primary);
is(ledger($primary, 'z', 'spent'), '0.072265625', 'after kill -9: z spent the same');
is(ledger($primary, 'late', 'accounting, spent'), 'zcdp|0.005', 'and late, zCDP, the same');
$primary->wait_for_catchup($standby);
same_views($primary, $standby, 'standby after the primary\'s crash');

# spent 0.072265625 of 0.5: a release of epsilon 1 (rho 0.5) is refused, in rho
like(release($primary, '1', 'z'),
	qr/ERROR:  ZB001: privacy budget of ledger "z" would be overspent\n.*DETAIL:  Requested rho 0.5 \(a release of epsilon 1\), remaining rho 0.427734375\./,
	'primary: overspending refused (ZB001) in rho');
$primary->wait_for_catchup($standby);
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'not promoted';
is(ledger($standby, 'z', 'accounting, spent, remaining'), 'zcdp|0.072265625|0.427734375',
	'promoted: every charge, in rho');
# epsilon 0.925: rho 0.4278125, more than remains; 0.92 (0.4232): fits
like(release($standby, '0.925', 'z'), qr/ERROR:  ZB001:/, 'promoted: a release beyond the rho left is refused');
is(release($standby, '0.92', 'z'), 't', 'promoted: one within it goes on');
is(ledger($standby, 'z', 'spent'), '0.495465625', 'promoted: charged ceil(0.92^2 / 2) = 0.4232');

# ---------------------------------------------------------------------
# 2. A store written by contcount 0.4, read by this library.
# ---------------------------------------------------------------------
my $old = PostgreSQL::Test::Cluster->new('store04');
$old->init;
$old->append_conf('postgresql.conf',
	"shared_preload_libraries = 'contcount'\nwal_consistency_checking = 'contcount'");
# in place before the first start: what a cluster that ran 0.4 has
copy($fixture, $old->data_dir . '/global/1668247156') or die "copy: $!";
chmod 0600, $old->data_dir . '/global/1668247156';
$old->start;
$old->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    CREATE TABLE events AS SELECT i FROM generate_series(1, 20) i;
});
is(query($old, q{SELECT string_agg(concat_ws(' ', units, refund, function, accounting,
        coalesce(releases::text, '-')), ', ') FROM contcount_internal.store_charges()}),
	'125000000 f noisy_count pure -, 250000000 f running_counts pure -, '
	  . '250000000 f noisy_count pure -, 500000000 f noisy_count, 2 releases pure -, '
	  . '1000000000 f noisy_count, 4 releases pure -, 500000000 t noisy_count, 2 unused pure -',
	'0.4 store: every charge and refund read, as pure, releases not recorded');
my ($ret, $out, $err) = $old->psql('postgres', "SELECT contcount.create_ledger('old_pure', 10)");
like($err, qr/takes back the spending .*: spent 0.375$/, '0.4 store: old_pure taken back by name');
($ret, $out, $err) = $old->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT contcount.create_ledger('old_other', rho => 3, delta => 0.000001)");
like($err, qr/ERROR:  ZB003: ledger "old_other" was created here before, accounting in pure, and spent epsilon 1.25/,
	'0.4 store: old_other cannot come back as a zCDP ledger (ZB003)');
$old->safe_psql('postgres', "SELECT contcount.create_ledger('old_other', 3)");
is(query($old, 'SELECT name, spent, accounting FROM contcount.ledgers ORDER BY name'),
	"old_other|1.25|pure\nold_pure|0.375|pure", '0.4 store: both ledgers back, pure, with their spending');
is(release($old, '0.125', 'old_pure'), 't', '0.4 store: a new charge, in the new format, on the same page');
$old->safe_psql('postgres', "SELECT contcount.create_ledger('new_z', rho => 1, delta => 0.000001)");
is(release($old, '0.5', 'new_z'), 't', '0.4 store: and a zCDP ledger beside the old ones');
my $before = query($old, $ledgers_sql);
my $audit = query($old, $charges_sql);
like($before, qr/old_pure\|10\|0.5\|/, 'old_pure spent 0.5');
$old->restart;
is(query($old, $ledgers_sql), $before, 'after a restart: the same ledgers, from both formats');
ContcountTest::kill9_postmaster_and_start($old);
is(query($old, $ledgers_sql), $before, 'after kill -9 (redo of both formats): the same ledgers');
is(query($old, $charges_sql), $audit, 'and the same audit');

# ---------------------------------------------------------------------
# 3. Accounting never changes; export and import carry it.
# ---------------------------------------------------------------------
$old->safe_psql('postgres', 'DROP EXTENSION contcount; CREATE EXTENSION contcount');
($ret, $out, $err) = $old->psql('postgres', "\\set VERBOSITY verbose\nSELECT contcount.create_ledger('new_z', 5)");
like($err, qr/ERROR:  ZB003: ledger "new_z" was created here before, accounting in zcdp, and spent rho 0.125/,
	'dropped extension: new_z cannot come back as a pure ledger (ZB003)');
($ret, $out, $err) = $old->psql('postgres',
	"SELECT contcount.create_ledger('new_z', rho => 2, delta => 0.000001)");
like($err, qr/takes back the spending .*: spent 0.125$/, 'as a zCDP ledger it takes its spending back');

my $export = $standby->safe_psql('postgres', 'SELECT contcount.export_ledgers()');
is(query($old, "SELECT * FROM contcount.import_ledgers(\$x\$$export\$x\$) ORDER BY ledger"),
	"late|0.005|created\nz|0.495465625|created", 'the promoted standby\'s ledgers imported into another cluster');
is(ledger($old, 'z', 'accounting, budget, spent, delta, spent_epsilon'),
	ledger($standby, 'z', 'accounting, budget, spent, delta, spent_epsilon'),
	'imported: the same accounting, budget, rho spent, delta and (epsilon, delta)');
is(query($old, q{SELECT string_agg(concat_ws(' ', epsilon, releases, release_epsilon), ', ' ORDER BY at)
        FROM contcount.charges WHERE ledger = 'z'}),
	query($standby, q{SELECT string_agg(concat_ws(' ', epsilon, releases, release_epsilon), ', ' ORDER BY at)
        FROM contcount.charges WHERE ledger = 'z'}),
	'imported: the same audit, each release\'s epsilon');
is(query($old, "SELECT * FROM contcount.import_ledgers(\$x\$$export\$x\$) ORDER BY ledger"),
	"late|0.005|kept\nz|0.495465625|kept", 'imported again: kept');
my $as_pure = $old->safe_psql('postgres', qq{
    SELECT jsonb_set(e, '{ledgers}', (SELECT jsonb_agg(jsonb_set(l, '{accounting}', '"pure"'))
                                      FROM jsonb_array_elements(e -> 'ledgers') l))
    FROM (SELECT \$x\$$export\$x\$::jsonb AS e) s});
like(query($old, "SELECT * FROM contcount.import_ledgers(\$x\$$as_pure\$x\$)"),
	qr/ERROR:  ZB003: ledger "(z|late)" accounts in zcdp here, and the export accounts it in pure/,
	'an export that says a zCDP ledger is pure is refused (ZB003)');
is(ledger($old, 'z', 'accounting, spent'), 'zcdp|0.495465625', 'and changes nothing');

$old->safe_psql('postgres', 'CREATE DATABASE old04');
$old->safe_psql('old04', "CREATE EXTENSION contcount VERSION '0.4'");
like(query($old, "SELECT * FROM contcount.import_ledgers(\$x\$$export\$x\$)", 'old04'),
	qr/ERROR:  22023: not an export of contcount ledgers, version 1 or older/,
	'a database still at 0.4 refuses a version 2 export');
is(query($old, 'SELECT count(*) FROM contcount.ledger', 'old04'), '0', 'and takes nothing in');

$standby->stop;
$old->stop;
done_testing();
