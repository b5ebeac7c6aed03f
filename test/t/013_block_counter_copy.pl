# A counter over a source with per-block budgets (issue 15) pays each block
# once as its clock enters it, durably:
# - after kill -9 of the postmaster, the blocks it paid stay paid and are
#   not charged again; its next step pays only the next block;
# - a copy (pg_dump, pg_restore into another database) pays its epsilon
#   again to its team's ledger and to every block it paid, once, before its
#   first step there, then only the blocks its own clock enters; the
#   original, back in its database, pays no copy;
# - a source's ledger dropped: its next blocks cannot be paid, the step is
#   not taken (tick() says why), the counter waits, the worker goes on;
#   and a copy of it, which cannot pay that ledger, waits the same way.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $node = PostgreSQL::Test::Cluster->new('blocks');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
});
$node->start;

# the step worker runs in database db (and so in no other)
sub serve
{
	my ($db) = @_;
	$node->append_conf('postgresql.conf', "contcount.database = '$db'");
	$node->restart;
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) > 0 FROM pg_stat_activity "
			  . "WHERE backend_type = 'contcount step worker' AND datname = '$db'"),
		"the step worker runs in database $db");
	return;
}

sub tick
{
	my ($db) = @_;
	return $node->safe_psql($db, "SET ROLE analyst; SELECT contcount.tick('taps_live')");
}

# What each block spent, by day from the counter's first: "day:spent ...".
sub blocks
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
        SELECT string_agg(extract(day FROM b.block_start - c.blocks_from) || ':' || b.spent, ' '
                          ORDER BY b.block_start)
        FROM contcount.blocks b, contcount.counter c
        WHERE b.source = 'taps' AND c.name = 'taps_live'});
}

# The block charges: "function first_day+blocks, ...", oldest first.
sub block_charges
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
        SELECT string_agg(a.function || ' ' || extract(day FROM a.first_block - c.blocks_from)
                          || '+' || a.blocks, ', ' ORDER BY a.at)
        FROM contcount.block_charges a, contcount.counter c
        WHERE a.source = 'taps' AND c.name = 'taps_live'});
}

sub team_spent
{
	my ($db) = @_;
	return $node->safe_psql($db, "SELECT spent FROM contcount.ledgers WHERE name = 'team'");
}

$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    CREATE ROLE analyst;
    SELECT contcount.create_ledger('data', 1);
    SELECT contcount.create_ledger('team', 100);
    SELECT contcount.grant_ledger('team', 'analyst');
    CREATE TABLE taps (user_id int, at timestamptz DEFAULT now());
    SELECT contcount.protect_table('taps', 'taps', 'user_id', 'at', 'data');
    SELECT contcount.source_blocks('taps', '1 day', 10, '30 days');
    SELECT contcount.grant_source('taps', 'analyst');
    SET ROLE analyst;
    SELECT contcount.create_counter('taps_live', 1, horizon => 100, step => '1 day', ledger => 'team',
                                    source => 'taps', mechanism => 'binary');
});
ok( $node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'"),
	'the step worker runs');
is(blocks('postgres'), '0:1 1:1', 'created: the counter paid the blocks of its first step');
$node->safe_psql('postgres', 'INSERT INTO taps (user_id) SELECT generate_series(1, 5)');
is(tick('postgres'), 1, 'step 1');
is(blocks('postgres'), '0:1 1:1 2:1', 'step 1 paid the block its next step enters');

# kill -9: what was paid stays paid, and is not paid again
kill9_postmaster_and_start($node);
ok( $node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker'"),
	'the step worker runs again after kill -9');
is(blocks('postgres'), '0:1 1:1 2:1', 'after kill -9: every block keeps what it spent');
is(tick('postgres'), 2, 'step 2 after kill -9');
is(blocks('postgres'), '0:1 1:1 2:1 3:1', 'step 2 paid only the next block');
is(block_charges('postgres'), 'create_counter 0+2, counter_step 2+1, counter_step 3+1',
	'one charge for each block entered');
is(team_spent('postgres'), '1', "the team's ledger paid once, at creation");

# a copy pays again: the team's ledger and every block the counter paid
my $dump = $node->basedir . '/postgres.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE copy');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('copy'), $dump ], 'pg_restore into copy');
serve('copy');
is(tick('copy'), 3, 'copy: step 3');
is(team_spent('copy'), '2', "copy: the team's ledger paid again");
is(blocks('copy'), '0:2 1:2 2:2 3:2 4:1', 'copy: every paid block paid again, and the next one');
is(block_charges('copy'),
	'create_counter 0+2, counter_step 2+1, counter_step 3+1, counter_copy 0+4, counter_step 4+1',
	'copy: one charge for the copy, one for the block its step entered');
is(tick('copy'), 4, 'copy: step 4');
is(blocks('copy'), '0:2 1:2 2:2 3:2 4:1 5:1', 'copy: later steps pay only the next block');
is(team_spent('copy'), '2', "copy: its team's ledger paid nothing more");

# the original was not copied: it pays only the blocks its clock enters
serve('postgres');
is(tick('postgres'), 3, 'original: step 3');
is(blocks('postgres'), '0:2 1:2 2:2 3:2 4:2 5:1', 'original: paid the block its step entered');
is(team_spent('postgres'), '2', "original: the team's ledger paid for the copy alone");

# the source's ledger dropped: the next blocks cannot be paid, so the step
# is not taken, the counter does not finish, the worker goes on
my $worker_sql = "SELECT pid FROM pg_stat_activity WHERE backend_type = 'contcount step worker'";
my $worker = $node->safe_psql('postgres', $worker_sql);
my $charges_before_drop = block_charges('postgres');
$node->safe_psql('postgres', "SELECT contcount.drop_ledger('data')");
my ($ret, $out, $err) = $node->psql('postgres', "SET ROLE analyst; SELECT contcount.tick('taps_live')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err,
	qr/ERROR:  42704: the ledger of the protected source of counter "taps_live" was dropped/,
	'ledger dropped: tick() says why the blocks cannot be paid');
like($err, qr/counter "taps_live" takes no step until the blocks of its next step are paid/,
	'ledger dropped: and that the counter waits for them');
is($node->safe_psql('postgres', "SELECT steps || ' ' || finished FROM contcount.counters WHERE name = 'taps_live'"),
	'3 false', 'ledger dropped: no step taken, the counter not finished');
is($node->safe_psql('postgres', $worker_sql), $worker, 'ledger dropped: the same worker goes on');
is(block_charges('postgres'), $charges_before_drop, 'ledger dropped: no block charged');
# the dropped ledger gave its blocks' room back: the view has none of them
is(blocks('postgres'), '', "ledger dropped: its blocks' room given back");

# a copy of the counter whose source's ledger is gone cannot pay: its step
# waits, and the worker goes on (it used to fail before its paying began,
# and restart in a loop)
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ],
	'pg_dump after the ledger was dropped');
$node->safe_psql('postgres', 'CREATE DATABASE copy2');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('copy2'), $dump ], 'pg_restore into copy2');
serve('copy2');
$worker = $node->safe_psql('postgres', $worker_sql);
($ret, $out, $err) = $node->psql('copy2', "SET ROLE analyst; SELECT contcount.tick('taps_live')");
like($err, qr/counter "taps_live" was copied, and its protected source "taps" or its ledger is gone/,
	'copy without its ledger: tick() says why it cannot pay');
($ret, $out, $err) = $node->psql('copy2', "SET ROLE analyst; SELECT contcount.tick('taps_live')");
like($err, qr/its ledger is gone/, 'copy without its ledger: and says it again');
is($node->safe_psql('postgres', $worker_sql), $worker, 'copy without its ledger: the same worker goes on');
is($node->safe_psql('copy2', "SELECT steps FROM contcount.counters WHERE name = 'taps_live'"),
	'3', 'copy without its ledger: no step taken');

done_testing();
