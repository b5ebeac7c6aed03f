# Helpers shared by contcount's TAP tests.
package ContcountTest;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(kill9_postmaster_and_start wait_for_step_worker crash_rounds);

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

1;
