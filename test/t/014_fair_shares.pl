# Fair shares of the server's room: no counter takes more than its turn of
# the step worker, and a dropped ledger gives its slot back, for good.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('fair');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
wal_consistency_checking = 'contcount'
contcount.database = 'postgres'
contcount.max_ledgers = 4
contcount.max_counters = 4
contcount.max_blocks = 20
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('app', 100);
    ALTER DATABASE postgres SET contcount.ledger = 'app';
});
$node->safe_psql('postgres', q{
    SELECT contcount.create_counter('behind', 0.001, mechanism => 'hybrid', step => '1 second');
    SELECT contcount.create_counter('fresh', 0.001, mechanism => 'hybrid', step => '1 second');
});

# A counter ten days behind its 1-second schedule, as after ten days of downtime:
# 864000 steps are due at once when the server starts again.
$node->safe_psql('postgres', q{
    UPDATE contcount.counter SET started_at = started_at - interval '10 days' WHERE name = 'behind';
});
$node->restart;

sub steps
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT steps FROM contcount.counter WHERE name = '$name'");
}

# Wait until the worker is working through the late counter's steps.
for (1 .. 600)
{
	last if steps('behind') > 10;
	usleep(100_000);
}
my $fresh_before = steps('fresh');
sleep(6);
my $fresh_after = steps('fresh');
my $behind = steps('behind');
cmp_ok($fresh_after - $fresh_before, '>=', 3,
	"a 1-second counter keeps stepping (from $fresh_before to $fresh_after in 6 s) "
	  . "while another is 864000 steps behind");
cmp_ok($behind, '<', 860000, "the late counter is still catching up ($behind steps)");
# It catches up from its last committed step, one step a round.
my $later = steps('behind');
sleep(1);
cmp_ok(steps('behind'), '>', $later, 'the late counter goes on catching up');

$node->safe_psql('postgres', q{
    SELECT contcount.drop_counter('behind');
    SELECT contcount.drop_counter('fresh');
});

# Run sql as role; returns stderr (empty when it succeeded).
sub as_role
{
	my ($role, $sql) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', $sql, extra_params => [ '-U', $role, '-v', 'VERBOSITY=default' ]);
	return $ret == 0 ? '' : $stderr;
}

$node->safe_psql('postgres', q{
    CREATE ROLE regress_r1 LOGIN;
    CREATE ROLE regress_r2 LOGIN;
    GRANT EXECUTE ON FUNCTION contcount.create_ledger(text, numeric) TO regress_r1, regress_r2;
});

# A standby, whose store is loaded before the ledgers below are created and
# dropped: redo must forget them as the primary does.
$node->backup('streaming');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'streaming', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM contcount.ledgers'), '1',
	'the standby loads its store');

sub as_standby_role
{
	my ($role, $sql) = @_;
	my ($ret, $stdout, $stderr) = $standby->psql('postgres', $sql, extra_params => [ '-U', $role ]);
	return $ret == 0 ? '' : $stderr;
}

# Ledgers: one role creating and dropping ledgers, 10 times with room for 4,
# does not fill the server: a dropped ledger gives its slot back, and keeps
# it given back through a restart (the store's load replays the drops).
my $cycles = 0;
for (1 .. 10)
{
	last if as_role('regress_r1', q{SELECT contcount.create_ledger('cycle', 1)}) ne '';
	last if as_role('regress_r1', q{SELECT contcount.drop_ledger('cycle')}) ne '';
	$cycles++;
}
is($cycles, 10, 'a role creates and drops a ledger 10 times with room for 4');
$node->restart;
is(as_role('regress_r1', q{SELECT contcount.create_ledger('cycle', 1); SELECT contcount.drop_ledger('cycle')}),
	'', 'the dropped ledgers took no room after a restart');
# promoted, the standby (which redid every creation and drop) has the room
# too: three more ledgers beside 'app'
$node->wait_for_catchup($standby);
$standby->promote;
is( as_standby_role(
		'regress_r1', q{SELECT contcount.create_ledger('s1', 1);
    SELECT contcount.create_ledger('s2', 1); SELECT contcount.create_ledger('s3', 1)}),
	'', 'redo gave the dropped ledgers\' room back on the standby');
$standby->stop;

# Blocks: with room for 20, one ledger holding 15 leaves 5 for the others;
# the refusal names who holds the room (to a superuser: the ledgers by id);
# dropping the ledger gives its blocks' room back.
$node->safe_psql('postgres', q{
    CREATE TABLE visits (user_id int, at timestamptz);
    INSERT INTO visits SELECT u, now() - u * interval '1 hour' FROM generate_series(1, 100) u;
    CREATE TABLE visits2 AS TABLE visits;
    SELECT contcount.create_ledger('d1', 1000);
    SELECT contcount.create_ledger('d2', 1000);
    SELECT contcount.protect_table('s1', 'visits', 'user_id', 'at', 'd1');
    SELECT contcount.protect_table('s2', 'visits2', 'user_id', 'at', 'd2');
    SELECT contcount.source_blocks('s1', '1 day', 1000, '60 days');
    SELECT contcount.source_blocks('s2', '1 day', 1000, '60 days');
    SELECT contcount.grant_source('s1', 'regress_r1');
    SELECT contcount.grant_source('s2', 'regress_r2');
});
my $days = q{date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'};
is(as_role('regress_r1',
	"SELECT count(*) FROM contcount.source_running_counts('s1', 1, '1 day', $days - interval '14 days', 15, mechanism => 'binary')"),
	'', 'a release makes 15 of the 20 blocks');
my $refused = as_role('regress_r2',
	"SELECT count(*) FROM contcount.source_running_counts('s2', 1, '1 day', $days - interval '9 days', 10, mechanism => 'binary')");
like($refused, qr/the server holds room for contcount.max_blocks = 20 blocks.*DETAIL:  Ledger "d2" holds 0 of them/s,
	'the blocks refusal tells an analyst its own ledger\'s count');
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT count(*) FROM contcount.source_running_counts('s2', 1, '1 day', $days - interval '9 days', 10, mechanism => 'binary')");
like($stderr, qr/DETAIL:  Held by ledger id \d+ of database \d+ \(15\)\./,
	'and a superuser who holds the room');
$node->safe_psql('postgres', q{
    SELECT contcount.drop_source('s1');
    SELECT contcount.drop_ledger('d1');
});
is(as_role('regress_r2',
	"SELECT count(*) FROM contcount.source_running_counts('s2', 1, '1 day', $days - interval '9 days', 10, mechanism => 'binary')"),
	'', 'a dropped ledger gives its blocks\' room back');
$node->safe_psql('postgres', q{
    SELECT contcount.drop_source('s2');
    SELECT contcount.drop_ledger('d2');
});

# Ledgers: the refusal when the server is full says who created them, to
# an analyst only its own count.
as_role('regress_r1', q{SELECT contcount.create_ledger('r1a', 1); SELECT contcount.create_ledger('r1b', 1)});
$node->safe_psql('postgres', q{SELECT contcount.create_ledger('su1', 1)});
like(as_role('regress_r2', q{SELECT contcount.create_ledger('r2a', 1)}),
	qr/the server already holds contcount.max_ledgers = 4 ledgers.*DETAIL:  Role "regress_r2" created 0 of them\./s,
	'the ledgers refusal tells an analyst its own count');
($ret, $stdout, $stderr) = $node->psql('postgres', q{SELECT contcount.create_ledger('su2', 1)});
like($stderr, qr/DETAIL:  Created by role (postgres \(2\), role regress_r1|regress_r1 \(2\), role postgres) \(2\)\./,
	'and a superuser which roles created them');

# Counters: the same for contcount.max_counters (here 4).
as_role('regress_r1', q{
    SELECT contcount.create_counter('c1', 0.001, mechanism => 'hybrid', step => '1 day');
    SELECT contcount.create_counter('c2', 0.001, mechanism => 'hybrid', step => '1 day');
    SELECT contcount.create_counter('c3', 0.001, mechanism => 'hybrid', step => '1 day');
});
$node->safe_psql('postgres', q{SELECT contcount.create_counter('c4', 0.001, mechanism => 'hybrid', step => '1 day')});
like(as_role('regress_r2', q{SELECT contcount.create_counter('c5', 0.001, mechanism => 'hybrid', step => '1 day')}),
	qr/the server already holds contcount.max_counters = 4 counters.*DETAIL:  Role "regress_r2" owns 1 of them, this one included\./s,
	'the counters refusal tells an analyst its own count');
($ret, $stdout, $stderr) = $node->psql('postgres',
	q{SELECT contcount.create_counter('c5', 0.001, mechanism => 'hybrid', step => '1 day')});
like($stderr, qr/DETAIL:  This one included, owned by role regress_r1 \(3\), role postgres \(2\)\./,
	'and a superuser which roles own them');

done_testing();
