# Counters through restarts and repeated kill -9 under concurrent inserts
# with random aborts: every released value stays as it was, no state is
# drawn again, and the exact count equals the committed rows, none lost,
# none counted twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('counters');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
restart_after_crash = on
max_connections = 20
contcount.max_counters = 4
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('app', 100);
    ALTER DATABASE postgres SET contcount.ledger = 'app';
});
$node->safe_psql('postgres', q{
    SELECT contcount.create_counter('events', 1, horizon => 100000, step => '1 day', mechanism => 'binary');
    SELECT contcount.create_counter('open', 1, mechanism => 'hybrid', step => '1 second');
    SELECT contcount.create_counter('statements', 1, horizon => 100000, step => '1 day', mechanism => 'binary');
    SELECT contcount.create_ledger('gauss', rho => 100, delta => 0.000001);
    SELECT contcount.create_counter('gaussian', mechanism => 'blt', rho => 1, horizon => 100000,
        step => '1 day', ledger => 'gauss');
    CREATE TABLE events (id bigserial, v int);
    CREATE TRIGGER count_events AFTER INSERT ON events
        FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('events');
    CREATE TRIGGER count_open AFTER INSERT ON events
        REFERENCING NEW TABLE AS inserted
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('open');
    CREATE TRIGGER count_statements AFTER INSERT ON events
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('statements');
    CREATE TRIGGER count_gaussian AFTER INSERT ON events
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('gaussian');
});

# the inserts: single rows and batches, a quarter of them rolled back
my $script = $node->basedir . '/inserts.sql';
open(my $fh, '>', $script) or die;
print $fh q{
\set rows random(1, 20)
\set abort random(0, 3)
BEGIN;
INSERT INTO events (v) SELECT g FROM generate_series(1, :rows) g;
\if :abort = 0
ROLLBACK;
\else
COMMIT;
\endif
};
close $fh;

sub history
{
	my ($counter) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(t || ':' || noisy_count, ',' ORDER BY t) FROM contcount.history('$counter')");
}

sub state
{
	my ($counter) = @_;
	return $node->safe_psql('postgres',
		"SELECT steps || ' ' || md5(state) FROM contcount.counter_internals('$counter')");
}

# every committed row counted once by each form of the trigger: released in
# steps plus pending
sub all_counted
{
	return $node->safe_psql('postgres', q{
        SELECT bool_and((SELECT count(*) FROM events) = i.exact_released + i.pending)
        FROM unnest(ARRAY['events', 'open', 'statements', 'gaussian']) c,
             contcount.counter_internals(c) i});
}

sub start_load
{
	my ($seconds) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[ 'pgbench', '--no-vacuum', '--client=2', "--time=$seconds", '--file', $script,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
}

# the step worker must be back before ticks work again
sub wait_for_worker
{
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'")
	  or die 'no step worker';
}

for my $round (1 .. 3)
{
	my $load = start_load(6);
	for (1 .. 5)
	{
		usleep(400_000);
		$node->safe_psql('postgres',
			"SELECT contcount.tick('events'), contcount.tick('statements'), contcount.tick('gaussian')");
	}
	my $events_before = history('events');
	my $open_before = history('open');
	my $state_before = state('events');
	my $gaussian_before = history('gaussian');
	my $gaussian_state = state('gaussian');
	ok($events_before ne '', "round $round: released under load");
	cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM events'), '>', 0,
		"round $round: with inserts going on");

	# kill -9 the postmaster while the inserts go on
	kill9_postmaster_and_start($node);
	$load->finish;
	wait_for_worker();

	is(history('events'), $events_before, "round $round: every release of 'events' unchanged after kill -9");
	like(history('open'), qr/^\Q$open_before\E/, "round $round: the clock-driven releases too");
	is(state('events'), $state_before, "round $round: the state, noise and all, as committed");
	is(history('gaussian'), $gaussian_before, "round $round: every release of the blt counter unchanged");
	is(state('gaussian'), $gaussian_state, "round $round: its state (buffers and noise) as committed");
	is(all_counted(), 't', "round $round: every committed insert counted exactly once");
	$node->safe_psql('postgres',
		"SELECT contcount.tick('events'), contcount.tick('statements'), contcount.tick('gaussian')");
	is(all_counted(), 't', "round $round: and still after the next step");
}

# kill -9 of a backend in the middle of its inserts: a crash restart
{
	my $load = start_load(4);
	usleep(1_000_000);
	my ($victim) = split /\n/, $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1");
	my $before = history('events');
	kill 'KILL', $victim if $victim;
	$load->finish;
	$node->poll_query_until('postgres', 'SELECT true') or die 'no restart';
	wait_for_worker();
	is(history('events'), $before, 'a crashed backend changes no release');
	is(all_counted(), 't', 'and loses no committed insert');
}

# a clean restart
my $before = history('events');
my $state = state('events');
my $gaussian_before = history('gaussian');
my $gaussian_state = state('gaussian');
$node->restart;
wait_for_worker();
is(history('events'), $before, 'a clean restart keeps every release');
is(state('events'), $state, 'and the state');
is(history('gaussian'), $gaussian_before, 'and the blt counter\'s releases');
is(state('gaussian'), $gaussian_state, 'and its state');
is(all_counted(), 't', 'and every count');
# the blt counter goes on from its state: the next step releases, charging nothing
$node->safe_psql('postgres', 'INSERT INTO events (v) VALUES (1)');
my $gaussian_steps = $node->safe_psql('postgres', "SELECT contcount.tick('gaussian')");
like(history('gaussian'), qr/^\Q$gaussian_before\E,$gaussian_steps:-?\d+$/,
	'the blt counter steps on after the restart, every earlier release as it was');
is($node->safe_psql('postgres', "SELECT spent FROM contcount.ledgers WHERE name = 'gauss'"), '1',
	'its zCDP ledger paid its rho once, at its creation');

# the setting caps the number of counters (four exist)
my ($ret, $out, $err) = $node->psql('postgres', "SELECT contcount.create_counter('fifth', 1, horizon => 10, mechanism => 'binary')");
like($err, qr/already holds contcount.max_counters = 4 counters/, 'a full server refuses a counter, saying why');

# counters live in contcount.database only: a trigger elsewhere does not
# feed the worker's counter of that name (its counts would be stepped only
# if that database became contcount.database, see 005)
$node->safe_psql('postgres', 'CREATE DATABASE elsewhere');
$node->safe_psql('elsewhere', q{
    CREATE EXTENSION contcount;
    CREATE TABLE e (i int);
    CREATE TRIGGER c AFTER INSERT ON e FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('events');
});
($ret, $out, $err) = $node->psql('elsewhere', 'INSERT INTO e VALUES (1)');
like($err, qr/WARNING:  trigger "c" on table "e" feeds counter "events", which does not exist/,
	'a trigger outside contcount.database does not feed its counters');
is($ret, 0, 'and, counting nothing, lets the insert through');

# the clock closes steps by itself
my $steps = $node->safe_psql('postgres', "SELECT steps FROM contcount.counters WHERE name = 'open'");
sleep 3;
cmp_ok($node->safe_psql('postgres', "SELECT steps FROM contcount.counters WHERE name = 'open'"),
	'>', $steps, 'the worker closes steps on the clock');

done_testing();
