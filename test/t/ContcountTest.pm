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
  foreign_partitions_sql);

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

1;
