# A counter over a protected source through kill -9 under concurrent
# inserts of the same persons with random aborts: the inserting
# transactions append their persons' rows to contcount.counter_unit_log,
# the step bounds and deletes them in its own transaction.  After each
# crash every release is as it was, and every committed row is counted
# exactly once within its person's bound: released plus pending equals
# the sum over persons of min(max_rows, committed rows), and what the steps
# kept per person (counter_unit) equals what they released.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('unit_log');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
restart_after_crash = on
max_connections = 20
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('app', 100);
    CREATE TABLE events (person int, at timestamptz DEFAULT now());
    SELECT contcount.protect_table('events', 'events', 'person', 'at', 'app', max_rows => 20);
    SELECT contcount.create_counter('people', 1, horizon => 100000, step => '1 day',
        ledger => 'app', source => 'events', mechanism => 'binary');
});

# rows of 10 persons that reach their bound and of 100,000 that do not,
# single rows and batches, a quarter rolled back, some in a savepoint
# rolled back
my $script = $node->basedir . '/inserts.sql';
open(my $fh, '>', $script) or die;
print $fh q{
\set rows random(1, 20)
\set abort random(0, 3)
BEGIN;
INSERT INTO events (person) SELECT CASE WHEN random() < 0.2 THEN (random() * 9)::int + 1
    ELSE (random() * 99999)::int + 1000 END FROM generate_series(1, :rows);
SAVEPOINT s;
INSERT INTO events (person) SELECT CASE WHEN random() < 0.2 THEN (random() * 9)::int + 1
    ELSE (random() * 99999)::int + 1000 END FROM generate_series(1, :rows);
\if :abort = 1
ROLLBACK TO SAVEPOINT s;
\endif
\if :abort = 0
ROLLBACK;
\else
COMMIT;
\endif
};
close $fh;

sub history
{
	return $node->safe_psql('postgres',
		"SELECT string_agg(t || ':' || noisy_count, ',' ORDER BY t) FROM contcount.history('people')");
}

sub exactly_once
{
	return $node->safe_psql('postgres', q{
        SELECT (SELECT sum(least(n, 20)) FROM (SELECT count(*) AS n FROM events GROUP BY person) p)
               = i.exact_released + i.pending
           AND i.exact_released = (SELECT coalesce(sum(rows), 0) FROM contcount.counter_unit)
        FROM contcount.counter_internals('people') i});
}

sub wait_for_worker
{
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'")
	  or die 'no step worker';
}

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
		$node->safe_psql('postgres', "SELECT contcount.tick('people')");
	}
	my $before = history();
	ok($before ne '', "round $round: released under load");
	kill9_postmaster_and_start($node);
	$load->finish;
	wait_for_worker();
	is(history(), $before, "round $round: every release unchanged after kill -9");
	is(exactly_once(), 't', "round $round: every committed row counted once, within its person's bound");
	$node->safe_psql('postgres', "SELECT contcount.tick('people')");
	is(exactly_once(), 't', "round $round: and still after the next step");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM contcount.counter_unit_log"), '0', "round $round: which took the whole log");
}
cmp_ok($node->safe_psql('postgres', "SELECT max(rows) FROM contcount.counter_unit"), '==', 20,
	'persons reached their bound');

done_testing();
