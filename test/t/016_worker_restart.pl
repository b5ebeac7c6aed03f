# The step worker always comes back: terminated (pg_terminate_backend), it
# logs why it stopped, the postmaster starts it again, and its counters go on
# from their last committed step; while it is away, contcount.counters shows
# a counter late.  With its database dropped (DROP DATABASE ... WITH (FORCE)),
# it logs why it cannot connect and tries again until the database is back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('worker_restart');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
});
$node->start;

my $worker_pid = q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'contcount step worker'};

sub setup_counter
{
	$node->safe_psql('postgres', q{
		CREATE EXTENSION contcount;
		SELECT contcount.create_ledger('app', 100);
		SELECT contcount.create_counter('ticker', 1, mechanism => 'hybrid', step => '1 second',
			ledger => 'app');
	});
	return;
}

sub steps
{
	return $node->safe_psql('postgres',
		q{SELECT steps FROM contcount.counters WHERE name = 'ticker'});
}

setup_counter();
$node->poll_query_until('postgres',
	q{SELECT steps >= 2 FROM contcount.counters WHERE name = 'ticker'})
  or die 'the counter does not step';
my $pid = $node->safe_psql('postgres', $worker_pid);
ok($pid ne '', 'the step worker runs');

# terminated: it says why, and comes back
my $offset = -s $node->logfile;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->wait_for_log(qr/contcount step worker stopping: it received SIGTERM/, $offset);
pass('the worker logs why it stopped, at LOG');
my $before = steps();
# away for 10 s (bgw_restart_time): the 1-second counter falls behind
ok( $node->poll_query_until('postgres',
		q{SELECT late_by > interval '1 second' FROM contcount.counters WHERE name = 'ticker'}),
	'contcount.counters shows the counter late while the worker is away');
$node->wait_for_log(qr/contcount step worker started in database "postgres"/, $offset);
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'contcount step worker' AND pid <> $pid"),
	'the postmaster started the worker again');
ok( $node->poll_query_until('postgres',
		"SELECT steps > $before + 2 FROM contcount.counters WHERE name = 'ticker'"),
	'the counter goes on stepping');
is( $node->safe_psql('postgres',
		q{SELECT count(*) = max(t) AND min(t) = 1 FROM contcount.history('ticker')}),
	't', 'from its last committed step: no step skipped or taken twice');
ok( $node->poll_query_until('postgres',
		q{SELECT late_by IS NULL OR late_by < interval '1 second' FROM contcount.counters WHERE name = 'ticker'}),
	'and catches up');

# its database dropped: it says why it cannot connect, and tries again
$offset = -s $node->logfile;
$node->safe_psql('template1', 'DROP DATABASE postgres WITH (FORCE)');
$node->wait_for_log(qr/contcount step worker stopping/, $offset);
$node->wait_for_log(
	qr/database "postgres" does not exist\n.*CONTEXT:  contcount step worker connecting to database "postgres" \(contcount.database\), again every 10 s/,
	$offset);
pass('without its database, the worker logs why it cannot connect');
$node->safe_psql('template1', 'CREATE DATABASE postgres');
$node->wait_for_log(qr/contcount step worker started in database "postgres"/, $offset);
setup_counter();
ok( $node->poll_query_until('postgres',
		q{SELECT steps >= 2 FROM contcount.counters WHERE name = 'ticker'}),
	'with the database back, the worker steps its counters again');

$node->stop;
done_testing();
