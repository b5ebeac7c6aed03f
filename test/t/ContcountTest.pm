# Helpers shared by contcount's TAP tests.
package ContcountTest;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(kill9_postmaster_and_start wait_for_step_worker crash_rounds start_contcount_node
  foreign_partitions_sql step_held_in_seal notifications_heard);

# kill -9 of the postmaster: its children notice and exit on their own;
# start again once every process of the old server is gone.
sub kill9_postmaster_and_start
{
	my ($node) = @_;
	my @pids = split /\n/,
	  $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity');
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	$node->kill9;
	for my $pid ($postmaster, @pids)
	{
		for (1 .. 300)
		{
			last unless kill(0, $pid);
			usleep(100_000);
		}
	}
	$node->start;
	return;
}

# Wait until the step worker runs again (after a restart).
sub wait_for_step_worker
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'")
	  or die 'no step worker';
	return;
}

# Three rounds of pgbench running $script while the counter steps, then
# kill -9 of the server: what was released ($history->()) is unchanged,
# $exactly_once->() holds before and after the next step, and that step
# took the whole unit log.  $what names what $exactly_once checks.
sub crash_rounds
{
	my ($node, $script, $counter, $history, $exactly_once, $what) = @_;
	for my $round (1 .. 3)
	{
		my ($out, $err) = ('', '');
		my $load = IPC::Run::start(
			[ 'pgbench', '--no-vacuum', '--client=3', '--time=5', '--file', $script,
			  '-h', $node->host, '-p', $node->port, 'postgres' ],
			'>', \$out, '2>', \$err);
		for (1 .. 4)
		{
			usleep(300_000);
			$node->safe_psql('postgres', "SELECT contcount.tick('$counter')");
		}
		my $before = $history->();
		ok($before ne '', "round $round: released under load");
		kill9_postmaster_and_start($node);
		$load->finish;
		wait_for_step_worker($node);
		is($history->(), $before, "round $round: every release unchanged after kill -9");
		is($exactly_once->(), 't', "round $round: $what");
		$node->safe_psql('postgres', "SELECT contcount.tick('$counter')");
		is($exactly_once->(), 't', "round $round: and still after the next step");
		is($node->safe_psql('postgres', "SELECT count(*) FROM contcount.counter_unit_log"),
			'0', "round $round: which took the whole log");
	}
	return;
}

# A new node with contcount preloaded and the settings given, started.
sub start_contcount_node
{
	my ($name, $settings) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'\n$settings");
	$node->start;
	return $node;
}

# The coordinator's side of sharded table "events": a postgres_fdw server
# a shard (extensions 'contcount', the user mapping to role coord) and a
# foreign partition events_i of each, hash partition i of the modulus given.
sub foreign_partitions_sql
{
	my ($shards, $modulus) = @_;
	my $sql = '';
	for my $i (0 .. $#$shards)
	{
		my ($host, $port, $n) = ($shards->[$i]->host, $shards->[$i]->port, $i + 1);
		$sql .= qq{
			CREATE SERVER shard$n FOREIGN DATA WRAPPER postgres_fdw
			  OPTIONS (host '$host', port '$port', dbname 'postgres', extensions 'contcount');
			CREATE USER MAPPING FOR CURRENT_USER SERVER shard$n OPTIONS (user 'coord');
			CREATE FOREIGN TABLE events_$i PARTITION OF events
			  FOR VALUES WITH (MODULUS $modulus, REMAINDER $i) SERVER shard$n OPTIONS (table_name 'events');
		};
	}
	return $sql;
}

# A step of the coordinator's counter held inside the shard's seal: the
# insert gives a person of the shard rows before a step ($tick) and one
# after, and a session of the shard holds the persons' bounded rows, which
# the seal then waits for.  Returns that session and the step under way.
sub step_held_in_seal
{
	my ($shard, $coord, $counter, $insert, $tick) = @_;
	$shard->safe_psql('postgres', "$insert; $insert");
	$tick->();
	$shard->safe_psql('postgres', $insert);
	my $locker = $shard->background_psql('postgres');
	$locker->query_safe('BEGIN; SELECT * FROM contcount.counter_unit WHERE counter_id < 0 FOR UPDATE');
	my ($out, $err) = ('', '');
	my $step = IPC::Run::start(
		[ 'psql', '-X', '-h', $coord->host, '-p', $coord->port, '-U', 'analyst', '-c',
		  "SELECT contcount.tick('$counter')", 'postgres' ],
		'>', \$out, '2>', \$err);
	ok($shard->poll_query_until('postgres',
			"SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE '%shard_feed_take%' "
			  . "AND wait_event_type = 'Lock'"),
		"the coordinator's step of $counter waits inside the shard's seal");
	return ($locker, $step);
}

# The notifications a psql session printed, [channel, payload] each, once
# at least the number given arrived (or 10 seconds passed) and half a
# second more brought no other.
sub notifications_heard
{
	my ($session, $at_least) = @_;
	my $notice = qr/Asynchronous notification "(\w+)" with payload "(.*)" received from/;
	my @heard;
	for (1 .. 100)
	{
		my $out = $session->query_safe('SELECT 1');
		push @heard, [ $1, $2 ] while $out =~ /$notice/g;
		last if @heard >= $at_least;
		usleep(100_000);
	}
	usleep(500_000);
	my $out = $session->query_safe('SELECT 1');
	push @heard, [ $1, $2 ] while $out =~ /$notice/g;
	return @heard;
}

1;
