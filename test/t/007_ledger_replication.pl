# The ledger in WAL (issue 10), on every node preloading contcount:
# - a streaming standby sees every charge and every new ledger as soon as it
#   catches up (contcount.ledgers and contcount.charges equal the primary's)
#   and refuses releases with 25006;
# - promoted after spending 2 before its base backup and 6 after, it shows 8
#   and releases only the remaining 2 (ZB001 beyond);
# - point-in-time recovery to a restore point or an LSN: exactly the ledgers
#   and charges up to the target, not the later ones, and not fewer;
# - a hot base backup with a checkpoint during the copy: every charge, before,
#   during and after the copy, counted once (the copy holds pages newer than
#   the backup's start; a backup forces full-page images, so redo resets them
#   and applies every later charge; 008 covers redo meeting a page that
#   already has its charge, with full_page_writes off);
# - a synchronous standby: a release in a session with synchronous_commit =
#   local waits for it; with the standby down it shows no value at its
#   statement_timeout nor when cancelled (the charge stays spent); with its
#   WAL receiver frozen the release waits, returns once it runs again, the
#   primary is killed at once, and the promoted standby has the charge.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use PostgreSQL::Test::RecursiveCopy;
use Test::More;
use Time::HiRes qw(usleep time);

my $ledgers_sql =
  'SELECT name, budget, spent, remaining, created_at FROM contcount.ledgers ORDER BY name';
my $charges_sql = 'SELECT at, role, ledger, epsilon, function, statement '
  . 'FROM contcount.charges ORDER BY at, ledger, epsilon, statement';

# A query's output, or its error: a view that fails is reported as a failed
# comparison, not as the end of the test.
sub query
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	return $ret == 0 ? $out : "failed: $err";
}

sub spent
{
	my ($node, $ledger) = @_;
	return query($node, "SELECT spent FROM contcount.ledgers WHERE name = '$ledger'");
}

# One release of epsilon from the ledger, with the SQLSTATE in any error
# (VERBOSITY verbose prints "ERROR:  ZB001: ...").  A comment in the
# statement finds its charge in contcount.charges.
sub release
{
	my ($node, $epsilon, $ledger, %opt) = @_;
	my $tag = $opt{tag} // "release $epsilon";
	my $pre = $opt{pre} // '';
	my ($ret, $out, $err) = $node->psql(
		'postgres',
		"\\set VERBOSITY verbose\n$pre\n"
		  . "SELECT contcount.noisy_count($epsilon, '$ledger') FROM events /* $tag */;",
		timeout => $opt{timeout} // $PostgreSQL::Test::Utils::timeout_default,
		extra_params => $opt{extra_params} // []);
	return ($ret, $out, $err);
}

# The release returned a value: exit 0 and a number, nothing else.
sub released_ok
{
	my ($node, $epsilon, $ledger, $name) = @_;
	my ($ret, $out, $err) = release($node, $epsilon, $ledger);
	ok($ret == 0 && $out =~ /^-?\d+$/, $name) or diag("stdout: $out\nstderr: $err");
	return;
}

# The release was refused with this SQLSTATE, and showed no value.
sub refused
{
	my ($node, $epsilon, $ledger, $sqlstate, $name) = @_;
	my ($ret, $out, $err) = release($node, $epsilon, $ledger);
	ok($ret != 0 && $err =~ /ERROR:\s+$sqlstate:/ && $out !~ /\d/, $name)
	  or diag("exit $ret\nstdout: $out\nstderr: $err");
	return;
}

# Send a release of 0.5 from 'sync' to the background session $s (backend
# $pid of $node), marked by a comment, and whether it is waiting for the
# synchronous standby (wait event SyncRep) before it returns.
sub release_waits
{
	my ($node, $s, $pid, $comment) = @_;
	$s->{stdin} .= "SELECT contcount.noisy_count(0.5, 'sync') FROM events /* $comment */;\n"
	  . "\\echo 'release done'\n\\warn 'release done'\n";
	for (1 .. 100)
	{
		$s->{run}->pump_nb;
		return 0 if $s->{stdout} =~ /release done/;
		return 1
		  if $node->safe_psql('postgres',
			"SELECT wait_event = 'SyncRep' FROM pg_stat_activity WHERE pid = $pid") eq 't';
		usleep(100_000);
	}
	return 0;
}

# Both nodes show the same ledgers and the same charges.
sub same_views
{
	my ($primary, $other, $what) = @_;
	my $ledgers = query($primary, $ledgers_sql);
	my $charges = query($primary, $charges_sql);
	is(query($other, $ledgers_sql), $ledgers, "$what: contcount.ledgers equal");
	is(query($other, $charges_sql), $charges, "$what: contcount.charges equal");
	return;
}

# A node that restores WAL into a new timeline must not archive it into the
# primary's archive: a later restore would follow that timeline.
sub no_archiving
{
	my ($node) = @_;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
archive_mode = off
});
	return;
}

sub wait_until_promoted
{
	my ($node) = @_;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die $node->name . ' did not finish recovery';
	return;
}

# the primary: streaming and archiving, contcount preloaded
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, has_archiving => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'");
$primary->start;
$primary->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('stream', 10);
    SELECT contcount.create_ledger('sync', 10);
    CREATE TABLE events AS SELECT i FROM generate_series(1, 100) i;
});

# ---------------------------------------------------------------------
# A streaming standby sees each charge as it is made.
# ---------------------------------------------------------------------
released_ok($primary, 1, 'stream', 'primary: a release before the base backup');
released_ok($primary, 1, 'stream', 'primary: another');
is(spent($primary, 'stream'), '2', 'primary: spent 2 of 10 before the base backup');

$primary->backup('streaming');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'streaming', has_streaming => 1);
no_archiving($standby);
$standby->start;
$primary->wait_for_catchup($standby);
same_views($primary, $standby, 'standby from the backup');

my $total = 2;
for my $epsilon ('1.5', '0.5', '2', '2')
{
	released_ok($primary, $epsilon, 'stream', "primary: a release of $epsilon");
	$total += $epsilon;
	$primary->wait_for_catchup($standby);
	is(spent($standby, 'stream'), $total, "standby: spent $total as soon as it caught up");
	same_views($primary, $standby, "after a charge of $epsilon");
}

# a ledger created after the base backup reaches the standby through WAL
$primary->safe_psql('postgres', "SELECT contcount.create_ledger('late', 1)");
released_ok($primary, '0.25', 'late', "primary: a release from a ledger created after the backup");
$primary->wait_for_catchup($standby);
is(spent($standby, 'late'), '0.25', 'standby: the new ledger and its charge');
same_views($primary, $standby, 'after a new ledger');

# the standby cannot charge, so it releases nothing
refused($standby, '0.5', 'stream', '25006', 'standby: noisy_count refused with 25006');
{
	my ($ret, $out, $err) = $standby->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT * FROM contcount.running_counts(ARRAY[1, 2, 3], 0.5, ledger => 'stream', mechanism => 'binary')");
	ok($ret != 0 && $err =~ /ERROR:\s+25006:/ && $out eq '', 'standby: running_counts refused with 25006')
	  or diag("stdout: $out\nstderr: $err");
}
is(spent($standby, 'stream'), '8', 'standby: a refused release costs nothing');

# ---------------------------------------------------------------------
# Promoted, the standby remembers the 6 spent after its base backup.
# ---------------------------------------------------------------------
$standby->promote;
wait_until_promoted($standby);
is(spent($standby, 'stream'), '8', 'promoted: spent 8, the 2 before the backup and the 6 after');
is(query($standby, "SELECT remaining FROM contcount.ledgers WHERE name = 'stream'"),
	'2', 'promoted: 2 remain');
refused($standby, 3, 'stream', 'ZB001', 'promoted: a release of 3 is refused with ZB001');
released_ok($standby, 2, 'stream', 'promoted: a release of the remaining 2 goes on');
refused($standby, '0.000001', 'stream', 'ZB001', 'promoted: then not even the smallest release');
is(spent($standby, 'stream'), '10', 'promoted: exactly the budget spent');
$standby->stop;

# ---------------------------------------------------------------------
# Point-in-time recovery from a base backup and the WAL archive: exactly
# the charges up to the target, not the later ones, and not fewer.
# ---------------------------------------------------------------------
$primary->backup('pitr');
# created after the backup: its creation and charges come from WAL only
$primary->safe_psql('postgres', "SELECT contcount.create_ledger('pitr', 10)");
released_ok($primary, '0.5', 'pitr', 'primary: pitr charge 1');
released_ok($primary, '0.25', 'pitr', 'primary: pitr charge 2');
released_ok($primary, '0.125', 'pitr', 'primary: pitr charge 3, the last before the target');
my $ledgers_at_target = query($primary, $ledgers_sql);
my $charges_at_target = query($primary, $charges_sql);
my $target_lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$primary->safe_psql('postgres', "SELECT pg_create_restore_point('after_charges')");
# after the target
released_ok($primary, '1', 'pitr', 'primary: pitr charge after the target');
released_ok($primary, '0.5', 'late', 'primary: another ledger charged after the target');
$primary->safe_psql('postgres', "SELECT contcount.create_ledger('after_target', 1)");
released_ok($primary, '0.5', 'after_target', 'primary: a ledger created after the target');
my $walfile = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'WAL not archived';

for my $target ([ 'name', "recovery_target_name = 'after_charges'" ],
	[ 'lsn', "recovery_target_lsn = '$target_lsn'\nrecovery_target_inclusive = off" ])
{
	my ($kind, $conf) = @$target;
	my $node = PostgreSQL::Test::Cluster->new("pitr_$kind");
	$node->init_from_backup($primary, 'pitr', has_restoring => 1, standby => 0);
	no_archiving($node);
	$node->append_conf('postgresql.conf', "$conf\nrecovery_target_action = 'promote'");
	$node->start;
	wait_until_promoted($node);
	is(query($node, $ledgers_sql), $ledgers_at_target,
		"PITR to the $kind target: every ledger as spent at the target");
	is(query($node, $charges_sql), $charges_at_target,
		"PITR to the $kind target: exactly the charges up to it");
	is(spent($node, 'pitr'), '0.875', "PITR to the $kind target: the ledger made from WAL, 3 charges");
	is(spent($node, 'after_target'), '', "PITR to the $kind target: no ledger created after it");

	# The WAL after the target held charges whose values were shown: a store
	# stopped at a target cannot be proven current, so it fails closed,
	# across a restart, until what was spent since is imported and a
	# superuser accepts it.
	ok($node->log_contains('recovery stopped at a target'), "PITR to the $kind target: logged");
	refused($node, '0.125', 'pitr', '55000', "PITR to the $kind target: releases refused (55000)");
	$node->restart;
	refused($node, '0.125', 'pitr', '55000', "PITR to the $kind target: still refused after a restart");
	my $export = $primary->safe_psql('postgres', 'SELECT contcount.export_ledgers()');
	my $actions = $node->safe_psql('postgres',
		"SELECT string_agg(ledger || ' ' || action, ', ' ORDER BY ledger) "
		  . "FROM contcount.import_ledgers(\$x\$$export\$x\$::jsonb) "
		  . "WHERE ledger IN ('pitr', 'after_target')");
	is($actions, 'after_target created, pitr raised',
		"PITR to the $kind target: the primary's latest export raises and creates what was spent since");
	is(query($node, $ledgers_sql), query($primary, $ledgers_sql),
		"PITR to the $kind target: after the import, every ledger as spent on the primary");
	refused($node, '0.125', 'pitr', '55000', "PITR to the $kind target: refused until accepted");
	$node->safe_psql('postgres', 'SELECT contcount.accept_ledger_store()');
	released_ok($node, '0.125', 'pitr', "PITR to the $kind target: accepted, releases go on");
	is(spent($node, 'pitr'), spent($primary, 'pitr') + 0.125,
		"PITR to the $kind target: charged from the imported spending");
	$node->restart;
	released_ok($node, '0.125', 'pitr', "PITR to the $kind target: accepted for good");
	$node->stop;
}

# ---------------------------------------------------------------------
# A hot base backup taken by hand, with a checkpoint in the middle: the copy
# holds pages newer than the backup's start, and charges are made after the
# copy, before the backup ends.  Every charge up to the end of the backup
# counts, each once.
# ---------------------------------------------------------------------
$primary->safe_psql('postgres', "SELECT contcount.create_ledger('hot', 10)");
released_ok($primary, '1', 'hot', 'primary: a charge before the hot backup');
my $session = $primary->background_psql('postgres');
$session->query_safe("SELECT pg_backup_start('hot', true)");
released_ok($primary, '0.5', 'hot', 'primary: a charge after the backup started');
$primary->safe_psql('postgres', "SELECT contcount.create_ledger('hot_new', 3)");
released_ok($primary, '0.75', 'hot_new', 'primary: a ledger created during the backup');
$primary->safe_psql('postgres', 'CHECKPOINT');
my $hot_copy = $primary->backup_dir . '/hot';
PostgreSQL::Test::RecursiveCopy::copypath(
	$primary->data_dir, $hot_copy,
	filterfn => sub {
		my $path = shift;
		return 0 if $path =~ m{^pg_wal/.} && $path ne 'pg_wal/archive_status';
		return 0 if $path =~ m{^pg_wal/archive_status/.};
		return 0 if $path =~ m{^(pg_replslot|pg_stat_tmp)/.};
		return $path !~ m{^(postmaster\.pid|postmaster\.opts)$};
	});
released_ok($primary, '0.125', 'hot', 'primary: a charge after the copy, before the backup ends');
# (its NOTICE that the WAL is archived goes to stderr: not query_safe)
my $label = $session->query('SELECT labelfile FROM pg_backup_stop(true)');
like($label, qr/^START WAL LOCATION/, 'the hot backup ends with its label');
$session->quit;
open(my $fh, '>', "$hot_copy/backup_label") or die;
print $fh "$label\n";
close $fh;
my $ledgers_at_stop = query($primary, $ledgers_sql);
my $charges_at_stop = query($primary, $charges_sql);
{
	my $node = PostgreSQL::Test::Cluster->new('hot_restore');
	$node->init_from_backup($primary, 'hot', has_restoring => 1, standby => 0);
	no_archiving($node);
	$node->start;
	wait_until_promoted($node);
	is(spent($node, 'hot'), '1.625', 'hot backup: every charge, before, during and after the copy, once');
	is(spent($node, 'hot_new'), '0.75', 'hot backup: a ledger created during the backup, charged once');
	is(query($node, $ledgers_sql), $ledgers_at_stop, 'hot backup: every ledger as at the end of the backup');
	is(query($node, $charges_sql), $charges_at_stop, 'hot backup: every charge, none twice');
	$node->stop;
}

# ---------------------------------------------------------------------
# A synchronous standby: a release waits for it as a commit would, even in a
# session that sets synchronous_commit = local (any role may).
# ---------------------------------------------------------------------
$primary->safe_psql('postgres', q{
    CREATE ROLE analyst LOGIN;
    GRANT SELECT ON events TO analyst;
    SELECT contcount.grant_ledger('sync', 'analyst');
});
$primary->backup('sync');
my $sync = PostgreSQL::Test::Cluster->new('sync_standby');
$sync->init_from_backup($primary, 'sync', has_streaming => 1);
no_archiving($sync);
$sync->start;
$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'");
$primary->reload;
$primary->poll_query_until('postgres',
	"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'sync_standby'")
  or die 'the standby is not synchronous';
$primary->wait_for_catchup($sync);

my @analyst = (extra_params => [ '-U', 'analyst' ]);
my $local = 'SET synchronous_commit = local;';

# With the standby down a release does not return its value: it waits until
# its statement_timeout, then errors.  The charge, flushed before the wait,
# stays spent.
$sync->stop;
{
	my $start = time;
	my ($ret, $out, $err) = release($primary, '0.5', 'sync',
		tag => 'standby down, statement_timeout',
		pre => "$local\nSET statement_timeout = '2s';", timeout => 60, @analyst);
	my $waited = time - $start;
	ok($out !~ /\d/, 'standby down: the release shows no value') or diag("stdout: $out");
	ok($ret != 0 && $err =~ /ERROR:/, 'standby down: it ends in an error at its statement_timeout')
	  or diag("exit $ret, stderr: $err");
	cmp_ok($waited, '>=', 1.9, 'standby down: it waited for the standby');
	is(spent($primary, 'sync'), '0.5', 'standby down: its charge stays spent (the safe side)');
}

# ... and a release cancelled while it waits shows no value either
{
	my $s = $primary->background_psql('postgres', on_error_stop => 0, @analyst);
	$s->query_safe("\\set VERBOSITY verbose\n$local");
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	my $waiting = release_waits($primary, $s, $pid, 'cancelled');
	ok($waiting, 'standby down: a release waits for the synchronous standby (wait event SyncRep)');
	$primary->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	my $deadline = time + 60;
	until ($s->{stdout} =~ /release done/ && $s->{stderr} =~ /release done/ || time > $deadline)
	{
		$s->{run}->pump_nb;
		usleep(20_000);
	}
	my ($out) = $s->{stdout} =~ /^(.*)release done/s;
	$out //= $s->{stdout};
	ok($out !~ /\d/, 'standby down: a cancelled release shows no value') or diag("stdout: $s->{stdout}");
	like($s->{stderr}, qr/ERROR:/, 'standby down: the cancelled release ends in an error');
	$s->quit;
	is(spent($primary, 'sync'), '1', 'standby down: the cancelled charge stays spent');
}

# The standby back, but its WAL receiver frozen: a release waits; once it
# runs again the release returns, the primary is killed at once, and the
# promoted standby has the charge.
$sync->start;
$primary->poll_query_until('postgres',
	"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'sync_standby'")
  or die 'the standby is not synchronous again';
$primary->wait_for_catchup($sync);
is(spent($sync, 'sync'), '1', 'standby back: it has the charges made while it was down');
{
	my $walreceiver = $sync->safe_psql('postgres', 'SELECT pid FROM pg_stat_wal_receiver');
	my $s = $primary->background_psql('postgres', on_error_stop => 0, @analyst);
	$s->query_safe("\\set VERBOSITY verbose\n$local");
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	kill 'STOP', $walreceiver or die "cannot stop the WAL receiver $walreceiver";
	my $waiting = release_waits($primary, $s, $pid, 'before kill -9');
	ok($waiting && $s->{stdout} eq '',
		'frozen standby: the release waits, in a session with synchronous_commit = local')
	  or diag("stdout: $s->{stdout}");
	kill 'CONT', $walreceiver;
	my $deadline = time + 60;
	until ($s->{stdout} =~ /release done/ && $s->{stderr} =~ /release done/ || time > $deadline)
	{
		$s->{run}->pump_nb;
		usleep(1_000);
	}
	# kill -9 the primary the moment the value is out
	$primary->kill9;
	like($s->{stdout}, qr/^-?\d+\nrelease done/, 'frozen standby: the release returns once the standby flushed')
	  or diag("stdout: $s->{stdout}\nstderr: $s->{stderr}");
	$s->quit;
}
$sync->promote;
wait_until_promoted($sync);
is(query($sync, "SELECT count(*) FROM contcount.charges WHERE statement LIKE '%/* before kill -9 */%'"),
	'1', 'promoted synchronous standby: the charge of the value shown before kill -9 is there');
is(spent($sync, 'sync'), '1.5', 'promoted synchronous standby: every charge, nothing forgotten');
is(query($sync, "SELECT count(*) FROM contcount.charges WHERE ledger = 'sync'"),
	'3', 'promoted synchronous standby: three charges in the audit');
refused($sync, '8.500001', 'sync', 'ZB001', 'promoted synchronous standby: not a unit more than remains');
released_ok($sync, '8.5', 'sync', 'promoted synchronous standby: releases go on up to the budget');

done_testing();
