# Moving ledgers between clusters and through a dropped extension (issue
# 10, "Moving a cluster" and "Nothing older wins").  What a ledger spent
# and its audit live in the ledger store (WAL and global/1668247156), not in
# a table: pg_dump/pg_restore and pg_upgrade carry the ledgers' rows but not
# their spending, so the moved ledgers are refused until the old cluster's
# export_ledgers() is given to import_ledgers(), which never lowers what a
# ledger spent.  DROP EXTENSION and CREATE EXTENSION again do not reset what
# was spent on the same data.  The store file of contcount 0.2 is taken into
# WAL once, at the first use after ALTER EXTENSION UPDATE, and renamed; an
# older file put back, or one beside a store that never took it in, fails
# closed.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Copy;
use File::Path qw(mkpath);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

# the 0.2 store file of the fixture, before any chdir
my $fixture = abs_path(dirname(__FILE__)) . '/data/ledger-0.2';
my $ledgers_sql = 'SELECT name, budget, spent, remaining, created_at FROM contcount.ledgers ORDER BY name';
my $charges_sql = "SET timezone = 'UTC'; SELECT at, role, ledger, epsilon, function, statement "
  . 'FROM contcount.charges ORDER BY at, ledger, epsilon';
my $marketing_charges_sql = "SET timezone = 'UTC'; SELECT at, role, ledger, epsilon, function, statement "
  . "FROM contcount.charges WHERE ledger = 'marketing' ORDER BY at, ledger, epsilon";
# the audit without times and statements, for exact expected values
my $audit_sql = q{SELECT string_agg(concat_ws(' ', role, ledger, epsilon, function), E'\n'
    ORDER BY at, ledger, epsilon) FROM contcount.charges};

sub new_node
{
	my ($name, %params) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%params);
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'");
	return $node;
}

# A query's output, or its error: a view that fails is a failed comparison,
# not the end of the test.
sub query
{
	my ($node, $sql, $db) = @_;
	my ($ret, $out, $err) = $node->psql($db // 'postgres', $sql);
	return $ret == 0 ? $out : "failed: $err";
}

# name|budget|spent|remaining of every ledger the view shows
sub ledgers
{
	my ($node, $db) = @_;
	return query($node, 'SELECT name, budget, spent, remaining FROM contcount.ledgers ORDER BY name', $db);
}

# One release from a ledger; errors with their SQLSTATE ("ERROR:  XX001: ...").
sub release
{
	my ($node, $epsilon, $ledger, %opt) = @_;
	my ($ret, $out, $err) = $node->psql($opt{db} // 'postgres',
		"\\set VERBOSITY verbose\n"
		  . ($opt{role} ? "SET ROLE $opt{role};\n" : '')
		  . "SELECT contcount.noisy_count($epsilon, '$ledger') FROM events;");
	return ($ret, $err);
}

sub released_ok
{
	my ($node, $epsilon, $ledger, $name, %opt) = @_;
	my ($ret, $err) = release($node, $epsilon, $ledger, %opt);
	is($ret, 0, $name) or diag($err);
	return;
}

sub export
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres', 'SELECT contcount.export_ledgers()');
}

# import_ledgers() of a document: "ledger|spent|action" lines, or the error
# with its SQLSTATE
sub import_ledgers
{
	my ($node, $document, $db) = @_;
	my ($ret, $out, $err) = $node->psql($db // 'postgres',
		"\\set VERBOSITY verbose\n"
		  . "SELECT * FROM contcount.import_ledgers(\$export\$$document\$export\$) ORDER BY ledger");
	return $ret == 0 ? $out : "failed: $err";
}

# The error of a release from a ledger the store does not know.
sub missing_ok
{
	my ($node, $ledger, $name) = @_;
	my ($ret, $err) = release($node, '0.0625', $ledger);
	isnt($ret, 0, "$name: a release from $ledger is refused");
	like($err, qr/ERROR:  XX001: ledger "$ledger" is missing from the ledger store: releases are refused/,
		"$name: $ledger is missing from the ledger store (XX001)");
	like($err, qr/HINT:  .*contcount\.import_ledgers\(\)/, "$name: the hint names contcount.import_ledgers()");
	return;
}

# ---------------------------------------------------------------------
# 1. pg_dump and pg_restore into a new cluster
# ---------------------------------------------------------------------
my $old = new_node('old', allows_streaming => 1);
$old->start;
my $superuser = $old->safe_psql('postgres', 'SELECT current_user');
$old->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    CREATE ROLE analyst;
    CREATE TABLE events AS SELECT i FROM generate_series(1, 20) i;
    GRANT SELECT ON events TO analyst;
    SELECT contcount.create_ledger('marketing', 1);
    SELECT contcount.create_ledger('research', 2);
    SELECT contcount.create_ledger('retired', 0.5);
    SELECT contcount.grant_ledger('research', 'analyst');
    SELECT contcount.noisy_count(0.25, 'marketing') FROM events;
    -- batches of 1, 2 and 4 releases, 3 of them given back
    SELECT sum(c) > 0 FROM (SELECT contcount.noisy_count(0.0625, 'marketing') c FROM events GROUP BY i % 4) s;
    SET ROLE analyst;
    SELECT contcount.noisy_count(0.5, 'research') FROM events;
    RESET ROLE;
    SELECT contcount.noisy_count(0.125, 'retired') FROM events;
    SELECT contcount.drop_ledger('retired');
});
is(ledgers($old), "marketing|1|0.5|0.5\nresearch|2|0.5|1.5", 'old cluster: the ledgers have spent');
is(query($old, $audit_sql),
	"$superuser marketing 0.25 noisy_count\n"
	  . "$superuser marketing 0.0625 noisy_count\n"
	  . "$superuser marketing 0.125 noisy_count, 2 releases\n"
	  . "$superuser marketing 0.25 noisy_count, 4 releases\n"
	  . "$superuser marketing -0.1875 noisy_count, 3 unused\n"
	  . "analyst research 0.5 noisy_count\n"
	  . "$superuser retired 0.125 noisy_count",
	'old cluster: the audit has every charge and refund, the dropped ledger\'s too');
my $export0 = export($old);
released_ok($old, '0.25', 'research', 'old cluster: the analyst spends more', role => 'analyst');
my $export1 = export($old);
my $ledgers1 = query($old, $ledgers_sql);
my $charges1 = query($old, $charges_sql);
my $dump = $PostgreSQL::Test::Utils::tmp_check . '/old.dump';
$old->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $old->connstr('postgres') ], 'pg_dump of the old cluster');
# spent on the old cluster after the dump
released_ok($old, '0.5', 'research', 'old cluster: the analyst spends after the dump', role => 'analyst');
my $export2 = export($old);

my $new = new_node('restored');
$new->start;
# The roles have other OIDs than in the old cluster.  contcount.ledger_grant
# keeps a raw role OID, which pg_restore does not map; the import, seeing an
# export of another cluster, gives the grants back by role name.
$new->safe_psql('postgres', 'CREATE ROLE analyst;');
$new->command_ok([ 'pg_restore', '--exit-on-error', '-d', $new->connstr('postgres'), $dump ],
	'pg_restore into a new cluster');
is(query($new, 'SELECT name, budget, dropped_at IS NOT NULL FROM contcount.ledger ORDER BY name'),
	"marketing|1|f\nresearch|2|f\nretired|0.5|t", 'restored: the ledgers\' rows are back');
is(ledgers($new), "marketing|1||\nresearch|2||", 'restored: but not what they spent (unknown: NULL)');
is(query($new, 'SELECT count(*) FROM contcount.charges'), '0', 'restored: nor their audit');
missing_ok($new, $_, 'restored') for qw(marketing research);

is(import_ledgers($new, $export1), "marketing|0.5|created\nresearch|0.75|created\nretired|0.125|created",
	'import_ledgers() of the old cluster\'s export: every ledger created in the store');
is(query($new, $ledgers_sql), $ledgers1, 'imported: the same ledgers, budgets and spent as the old cluster');
is(query($new, $charges_sql), $charges1, 'imported: the same audit (time, role, ledger, epsilon, function, statement)');
is( query($new,
		'SELECT l.name, g.role_id::regrole, g.admin FROM contcount.ledger_grant g '
		  . 'JOIN contcount.ledger l ON l.id = g.ledger_id ORDER BY 1, 2'),
	'research|analyst|f',
	'imported: the grant is the analyst\'s again, by name, not the raw oid the dump kept');

# importing the same export again, or an older one, changes nothing
my $audit1 = query($new, $audit_sql);
is(import_ledgers($new, $export1), "marketing|0.5|kept\nresearch|0.75|kept\nretired|0.125|kept",
	'the same export imported twice: every ledger kept');
is(import_ledgers($new, $export0), "marketing|0.5|kept\nresearch|0.75|kept\nretired|0.125|kept",
	'an older export (research spent 0.5 there, 0.75 here): kept, nothing lowered');
is(query($new, $ledgers_sql), $ledgers1, 'after both: the ledgers as before');
is(query($new, $audit_sql), $audit1, 'and the audit as before');
is(query($new, 'SELECT count(*) FROM contcount.ledger'), '3', 'no ledger row added');

# an export that spent more raises the ledger to it, and says so in the audit
is(import_ledgers($new, $export2), "marketing|0.5|kept\nresearch|1.25|raised\nretired|0.125|kept",
	'a later export (research spent 1.25 there): research raised to it');
is(ledgers($new), "marketing|1|0.5|0.5\nresearch|2|1.25|0.75", 'raised: research spent 1.25');
is(query($new, $audit_sql), "$audit1\n$superuser research 0.5 import_ledgers",
	'raised: the audit shows an import_ledgers charge of the difference');
is(query($new, "SELECT statement FROM contcount.charges WHERE function = 'import_ledgers'"),
	'what the export spent beyond its audit', 'which says what it is');
is(import_ledgers($new, $export2), "marketing|0.5|kept\nresearch|1.25|kept\nretired|0.125|kept",
	'the later export again: kept');

# releases go on, and stop at exactly the budget
released_ok($new, '0.25', 'marketing', 'imported: a release from marketing');
released_ok($new, '0.25', 'marketing', 'imported: the last 0.25 of marketing');
my ($ret, $err) = release($new, '0.0625', 'marketing');
like($err, qr/ERROR:  ZB001: privacy budget of ledger "marketing" would be overspent/,
	'imported: marketing refuses beyond its budget (ZB001)');
like($err, qr/Requested epsilon 0.0625, remaining epsilon 0\b/, 'with nothing remaining');
released_ok($new, '0.75', 'research', 'imported: the analyst releases research\'s remaining 0.75 ...',
	role => 'analyst');
($ret, $err) = release($new, '0.001', 'research');
like($err, qr/ERROR:  ZB001: privacy budget of ledger "research" would be overspent/, '... and no more');
is(ledgers($new), "marketing|1|1|0\nresearch|2|2|0", 'imported: both ledgers spent exactly their budget');

# a document that is not an export is refused, and changes nothing
my $ledgers_json = $new->safe_psql('postgres', "SELECT \$x\$$export1\$x\$::jsonb -> 'ledgers'");
for my $document ('{}', '[]', '"contcount ledgers"', '{"format": "contcount ledgers", "ledgers": []}',
	'{"format": "contcount ledgers", "version": 3, "ledgers": []}',
	qq({"format": "something else", "version": 1, "ledgers": $ledgers_json}),
	qq({"version": 1, "ledgers": $ledgers_json}))
{
	like(import_ledgers($new, $document), qr/ERROR:  22023: not an export of contcount ledgers, version 2 or older/,
		'not an export: ' . (length($document) > 70 ? substr($document, 0, 70) . '...' : $document));
}
is(ledgers($new), "marketing|1|1|0\nresearch|2|2|0", 'after the refused documents: the ledgers as they were');

$new->stop;

# ---------------------------------------------------------------------
# 2. pg_upgrade (the same binaries) into a new cluster
# ---------------------------------------------------------------------
my $export3 = export($old);
my $ledgers3 = query($old, $ledgers_sql);
my $charges3 = query($old, $charges_sql);
is(ledgers($old), "marketing|1|0.5|0.5\nresearch|2|1.25|0.75", 'old cluster before pg_upgrade');
$old->stop;
my $upgraded = new_node('upgraded');
my $bindir = $old->config_data('--bindir');
# pg_upgrade writes its files into the working directory.  No step worker
# runs in binary-upgrade mode (postgres -b): its session in
# contcount.database ("postgres") would make pg_restore's DROP DATABASE
# "postgres" fail, and pg_upgrade with it.
chdir $PostgreSQL::Test::Utils::tmp_check;
command_ok(
	[
		'pg_upgrade', '--no-sync',
		'-d', $old->data_dir, '-D', $upgraded->data_dir,
		'-b', $bindir, '-B', $bindir,
		'-s', $upgraded->host, '-p', $old->port, '-P', $upgraded->port
	],
	'pg_upgrade');
$upgraded->start;
is(query($upgraded, 'SELECT name, budget, dropped_at IS NOT NULL FROM contcount.ledger ORDER BY name'),
	"marketing|1|f\nresearch|2|f\nretired|0.5|t", 'upgraded: the ledgers\' rows are there');
is(ledgers($upgraded), "marketing|1||\nresearch|2||", 'upgraded: but not what they spent');
is(query($upgraded, 'SELECT count(*) FROM contcount.charges'), '0', 'upgraded: nor their audit');
missing_ok($upgraded, $_, 'upgraded') for qw(marketing research);
is(import_ledgers($upgraded, $export3), "marketing|0.5|created\nresearch|1.25|created\nretired|0.125|created",
	'upgraded: import_ledgers() of the old cluster\'s export creates every ledger in the store');
is(query($upgraded, $ledgers_sql), $ledgers3, 'upgraded: the same ledgers, budgets and spent as the old cluster');
is(query($upgraded, $charges_sql), $charges3, 'upgraded: the same audit');
is(query($upgraded, 'SELECT g.role_id::regrole FROM contcount.ledger_grant g'), 'analyst',
	'upgraded: the grant names the analyst (pg_upgrade keeps role OIDs)');
released_ok($upgraded, '0.5', 'research', 'upgraded: the analyst releases from research', role => 'analyst');
released_ok($upgraded, '0.25', 'research', 'upgraded: and the last 0.25', role => 'analyst');
($ret, $err) = release($upgraded, '0.001', 'research', role => 'analyst');
like($err, qr/ERROR:  ZB001: privacy budget of ledger "research" would be overspent/, 'upgraded: then no more');
is(ledgers($upgraded), "marketing|1|0.5|0.5\nresearch|2|2|0", 'upgraded: research spent exactly its budget');

# ---------------------------------------------------------------------
# 3. DROP EXTENSION and CREATE EXTENSION again
# ---------------------------------------------------------------------
my $export4 = export($upgraded);
my $charges4 = query($upgraded, $charges_sql);
my $marketing_id = $upgraded->safe_psql('postgres', "SELECT id FROM contcount.ledger WHERE name = 'marketing'");
my $marketing_charges = query($upgraded, $marketing_charges_sql);
$upgraded->safe_psql('postgres', 'DROP EXTENSION contcount; CREATE EXTENSION contcount;');
is(query($upgraded, 'SELECT count(*) FROM contcount.ledger'), '0', 'dropped and created: no ledger row');
my $out;
($ret, $out, $err) = $upgraded->psql('postgres', "SELECT contcount.create_ledger('marketing', 3)");
is($ret, 0, 'create_ledger of the same name in the same database');
like($err,
	qr/NOTICE:  ledger "marketing" takes back the spending of the ledger of that name created here\b.*: spent 0.5$/,
	'a NOTICE says it takes back the old spending');
is(ledgers($upgraded), 'marketing|3|0.5|2.5', 'taken back: spent and remaining as before the drop, the new budget');
is($upgraded->safe_psql('postgres', 'SELECT id FROM contcount.ledger'), $marketing_id, 'under the old id');
is(query($upgraded, $charges_sql), $marketing_charges, 'with its audit');

$upgraded->safe_psql('postgres', 'CREATE DATABASE other');
$upgraded->safe_psql('other', 'CREATE EXTENSION contcount; CREATE TABLE events AS SELECT i FROM generate_series(1, 20) i');
($ret, $out, $err) = $upgraded->psql('other', "SELECT contcount.create_ledger('marketing', 3)");
is($ret, 0, 'create_ledger of the same name in another database');
is($err, '', 'takes nothing back (no NOTICE)');
is(ledgers($upgraded, 'other'), 'marketing|3|0|3', 'another database: the name starts fresh');
isnt($upgraded->safe_psql('other', 'SELECT id FROM contcount.ledger'), $marketing_id, 'under a new id');
released_ok($upgraded, '0.25', 'marketing', 'another database: a release', db => 'other');
is(ledgers($upgraded, 'other'), 'marketing|3|0.25|2.75', 'another database: charged to its own ledger');
is(ledgers($upgraded), 'marketing|3|0.5|2.5', 'not to the one taken back');

is(import_ledgers($upgraded, $export4), "marketing|0.5|kept\nresearch|2|kept\nretired|0.125|kept",
	'import_ledgers() of an export taken before the drop: every ledger kept');
is(query($upgraded, 'SELECT name, budget, dropped_at IS NOT NULL FROM contcount.ledger ORDER BY name'),
	"marketing|3|f\nresearch|2|f\nretired|0.5|t", 'its rows are back (marketing keeps its new budget)');
is(ledgers($upgraded), "marketing|3|0.5|2.5\nresearch|2|2|0", 'with the same spent');
is(query($upgraded, $charges_sql), $charges4, 'and the same audit');
($ret, $err) = release($upgraded, '0.001', 'research');
like($err, qr/ERROR:  ZB001: privacy budget of ledger "research" would be overspent/,
	'research, spent before the drop, still releases nothing');
released_ok($upgraded, '2.5', 'marketing', 'marketing releases its remaining 2.5 ...');
($ret, $err) = release($upgraded, '0.001', 'marketing');
like($err, qr/ERROR:  ZB001: privacy budget of ledger "marketing" would be overspent/, '... and no more');

# ---------------------------------------------------------------------
# 4. The store file of contcount 0.2, taken into WAL by the update
# ---------------------------------------------------------------------
my $legacy = new_node('legacy', allows_streaming => 1);
$legacy->start;
my $pgdata = $legacy->data_dir;
# the fixture's ledgers, as a 0.2 database holds them
$legacy->safe_psql('postgres', q{
    CREATE EXTENSION contcount VERSION '0.2';
    CREATE TABLE events AS SELECT i FROM generate_series(1, 20) i;
    INSERT INTO contcount.ledger (id, name, budget, created_at, created_by, dropped_at) VALUES
        (5643783364122635252, 'marketing', 10, '2026-11-22 18:35:39.988215+00', 10, NULL),
        (3598478913990110745, 'research', 5, '2026-11-22 18:35:39.989777+00', 10, NULL),
        (6028332947471245562, 'gone', 1, '2026-11-22 18:35:39.990621+00', 10, '2026-11-22 18:35:40+00');
});
$legacy->stop;
mkpath("$pgdata/contcount");
copy($fixture, "$pgdata/contcount/ledger") or die "copy: $!";
$legacy->start;
$legacy->safe_psql('postgres', 'ALTER EXTENSION contcount UPDATE');
is( $legacy->safe_psql('postgres',
		"SELECT e.extversion = a.default_version FROM pg_extension e "
		  . "JOIN pg_available_extensions a ON a.name = e.extname WHERE e.extname = 'contcount'"),
	't', '0.2: updated to the default version');
my $bootstrap = $legacy->safe_psql('postgres', 'SELECT 10::regrole');
my $legacy_ledgers = "marketing|10|0.5625|9.4375\nresearch|5|1.5|3.5";
my $grouped = q{SELECT sum(c) > 0 FROM (SELECT contcount.noisy_count(0.0625, 'marketing') c FROM events GROUP BY i % 3) s};
my $legacy_charges = join("\n",
	"2026-11-22 18:35:39.993663+00|$bootstrap|marketing|0.25|noisy_count|"
	  . q{SELECT contcount.noisy_count(0.25, 'marketing') FROM events;},
	"2026-11-22 18:35:39.994748+00|$bootstrap|research|1.5|noisy_count|"
	  . q{SELECT contcount.noisy_count(1.5, 'research') FROM events;},
	"2026-11-22 18:35:39.995573+00|$bootstrap|marketing|0.125|noisy_count|"
	  . q{SELECT contcount.noisy_count(0.125, 'marketing') FROM events;},
	"2026-11-22 18:35:42.878793+00|$bootstrap|marketing|0.0625|noisy_count|$grouped",
	"2026-11-22 18:35:42.88091+00|$bootstrap|marketing|0.125|noisy_count, 2 releases|$grouped");
my $gone_sql = 'SELECT contcount_internal.store_spent(6028332947471245562)';

# everything the 0.2 file held, once, and the file renamed
sub legacy_as_in_the_file
{
	my ($name, $ledgers, $charges) = @_;
	is(ledgers($legacy), $ledgers // $legacy_ledgers, "$name: the spent of the 0.2 file");
	is(query($legacy, $charges_sql), $charges // $legacy_charges, "$name: the audit of the 0.2 file");
	is(query($legacy, $gone_sql), '0', "$name: the dropped ledger is in the store");
	ok(!-e "$pgdata/contcount/ledger", "$name: no contcount/ledger");
	is(slurp_file("$pgdata/contcount/ledger.imported"), slurp_file($fixture),
		"$name: the file is contcount/ledger.imported");
	my $taken = () = slurp_file($legacy->logfile)
	  =~ /the ledger store file of contcount 0.2 "contcount\/ledger" is taken into WAL/g;
	is($taken, 1, "$name: the log says once that it was taken into WAL");
	return;
}
legacy_as_in_the_file('after the update');

# right after the import, before any checkpoint: redo brings it back, once
kill9_postmaster_and_start($legacy);
ok($legacy->log_contains('redo starts'), 'kill -9: crash recovery');
legacy_as_in_the_file('after kill -9');
$legacy->restart;
legacy_as_in_the_file('after a restart');
released_ok($legacy, '0.25', 'marketing', '0.2: releases go on after the update');
$legacy_ledgers = "marketing|10|0.8125|9.1875\nresearch|5|1.5|3.5";
is(ledgers($legacy), $legacy_ledgers, '0.2: and are charged on top of the file\'s spending');
my $legacy_audit = query($legacy, $charges_sql);
like($legacy_audit, qr/^\Q$legacy_charges\E\n[^\n]*\|$bootstrap\|marketing\|0.25\|noisy_count\|[^\n]*$/,
	'0.2: and audited after the file\'s charges');

# a standby from a base backup taken after the import
$legacy->backup('after_import');
my $standby = PostgreSQL::Test::Cluster->new('legacy_standby');
$standby->init_from_backup($legacy, 'after_import', has_streaming => 1);
$standby->start;
$legacy->wait_for_catchup($standby);
is(ledgers($standby), $legacy_ledgers, 'a standby from a base backup after the import: the same spent');
is(query($standby, $charges_sql), query($legacy, $charges_sql), 'and the same audit');
$standby->stop;

# A store that refuses: every release, and the views.
sub damaged_ok
{
	my ($node, $detail, $name) = @_;
	my ($ret, $err) = release($node, '0.0625', 'marketing');
	isnt($ret, 0, "$name: a release is refused");
	like($err, qr/ERROR:  XX001: the privacy budget ledger store is damaged: releases are refused/,
		"$name: the ledger store is damaged (XX001)");
	like($err, $detail, "$name: the detail says why");
	like(query($node, 'SELECT * FROM contcount.ledgers'), qr/ledger store is damaged/,
		"$name: the ledgers are not shown as if all were well");
	like(query($node, 'SELECT * FROM contcount.charges'), qr/ledger store is damaged/,
		"$name: nor the audit");
	return;
}

# The very file taken in, put back: it is what a crash between the import
# and the rename leaves, so it is known by its size and CRC and renamed
# again, nothing counted twice.
copy($fixture, "$pgdata/contcount/ledger") or die "copy: $!";
$legacy->restart;
legacy_as_in_the_file('the file taken in, put back', $legacy_ledgers, $legacy_audit);

# An older 0.2 file (the fixture cut before its last two charges, as a copy
# taken earlier would be) is not the one taken in: everything is refused.
my $older = substr(slurp_file($fixture), 0, 566);
open(my $fh, '>', "$pgdata/contcount/ledger") or die;
binmode $fh;
print $fh $older;
close $fh;
$legacy->restart;
damaged_ok($legacy,
	qr/DETAIL:  the store file of contcount 0.2 "contcount\/ledger" is not the one taken into WAL: charges live in WAL since 0.3; remove the file and restart/,
	'an older 0.2 file put back');
unlink("$pgdata/contcount/ledger") or die;
$legacy->restart;
is(ledgers($legacy), $legacy_ledgers, 'the older file removed, after a restart: the same spent');
is(query($legacy, $charges_sql), $legacy_audit, 'and the same audit');
released_ok($legacy, '0.1875', 'marketing', 'and releases go on');
is(ledgers($legacy), "marketing|10|1|9\nresearch|5|1.5|3.5", 'charged');

# A 0.2 file beside a store in WAL that never took one in: a lone older
# file, refused.
$upgraded->stop;
mkpath($upgraded->data_dir . '/contcount');
copy($fixture, $upgraded->data_dir . '/contcount/ledger') or die "copy: $!";
$upgraded->start;
damaged_ok($upgraded,
	qr/DETAIL:  a lone store file of contcount 0.2 "contcount\/ledger" beside the ledger store in WAL: charges live in WAL since 0.3; remove the file and restart/,
	'a lone 0.2 file');
unlink($upgraded->data_dir . '/contcount/ledger') or die;
$upgraded->restart;
is(ledgers($upgraded), "marketing|3|3|0\nresearch|2|2|0", 'the lone file removed, after a restart: the same spent');
ok(!-e $upgraded->data_dir . '/contcount/ledger.imported', 'nothing was taken in from it');

done_testing();
