# A dropped counter's feeds on its shards: drop_counter on the coordinator
# reaches every shard through the step worker, which asks each shard to
# drop the counter's feed (contcount.shard_feed_drop) and forgets its row
# of contcount.counter_shard only once the shard answered.
# - a counter read by steps, dropped: every shard's feed of it, its
#   batches, its persons' bounds and its log are gone after the worker's
#   next round; the other counter's feeds are untouched;
# - a counter whose feeds were opened but never read by a step, dropped
#   while a shard is down: the shard that is up drops its feed at once,
#   the one that is down once it is back, and then nothing of the counter
#   is left on the coordinator either.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $take = 'contcount.shard_feed_take(text, text, text, text, integer, bigint, text, text[], '
  . 'integer, boolean)';

my @shards;
for my $name ('drop1', 'drop2')
{
	my $shard = start_contcount_node($name, '');
	$shard->safe_psql('postgres', qq{
		CREATE EXTENSION contcount;
		CREATE ROLE coord LOGIN;
		CREATE TABLE events (user_id int, at timestamptz DEFAULT now());
		GRANT SELECT ON events TO coord;
		GRANT EXECUTE ON FUNCTION $take TO coord;
		GRANT EXECUTE ON FUNCTION contcount.shard_feed_drop(text) TO coord;
		SELECT contcount.feed_shard('events', 'user_id');
	});
	push @shards, $shard;
}

my $coord = start_contcount_node('drop_coordinator', "contcount.database = 'postgres'");
my $servers = foreign_partitions_sql(\@shards, 2);
$coord->safe_psql('postgres', qq{
	CREATE EXTENSION postgres_fdw;
	CREATE EXTENSION contcount;
	CREATE TABLE events (user_id int, at timestamptz DEFAULT now()) PARTITION BY HASH (user_id);
	$servers
	SELECT contcount.create_ledger('data', 1000000);
	SELECT contcount.create_ledger('team', 1000000);
	SELECT contcount.protect_table('events', 'events', 'user_id', 'at', 'data', 3);
	CREATE ROLE analyst LOGIN;
	ALTER ROLE analyst SET contcount.ledger = 'team';
	SELECT contcount.grant_source('events', 'analyst');
});
my $analyst = [ '-U', 'analyst' ];
$coord->safe_psql('postgres', q{
	SELECT contcount.create_counter('read', 1000, horizon => 100000, step => '1 day',
	    source => 'events', mechanism => 'binary');
	SELECT contcount.create_counter('kept', 1000, horizon => 100000, step => '1 day',
	    source => 'events', mechanism => 'binary');
}, extra_params => $analyst);
wait_for_step_worker($coord);
for my $shard (@shards)
{
	ok($shard->poll_query_until('postgres', 'SELECT count(*) = 2 FROM contcount.shard_feed'),
		$shard->name . ': both counters have a feed');
}

# What a shard holds of the coordinator's counter's feed: its feed rows,
# batches, persons' bounds, persons' keys and log rows.
sub holds
{
	my ($shard, $counter) = @_;
	my $id = $coord->safe_psql('postgres', "SELECT id FROM contcount.counter WHERE name = '$counter'");
	my $ids = qq{(SELECT -id FROM contcount.shard_feed WHERE split_part(name, ':', 3) = '$id')};
	$shard->safe_psql('postgres',
		"CREATE TABLE IF NOT EXISTS feed_of (name text PRIMARY KEY, log_id bigint);"
		  . "INSERT INTO feed_of SELECT '$counter', $ids ON CONFLICT DO NOTHING")
	  if $id ne '';
	return $shard->safe_psql('postgres', qq{
		SELECT (SELECT count(*) FROM contcount.shard_feed f, feed_of o
		        WHERE o.name = '$counter' AND -f.id = o.log_id)
		     || ',' || (SELECT count(*) FROM contcount.shard_feed_batch b, feed_of o
		        WHERE o.name = '$counter' AND -b.feed_id = o.log_id)
		     || ',' || (SELECT count(*) FROM contcount.counter_unit u, feed_of o
		        WHERE o.name = '$counter' AND u.counter_id = o.log_id)
		     || ',' || (SELECT count(*) FROM contcount.counter_unit_key u, feed_of o
		        WHERE o.name = '$counter' AND u.counter_id = o.log_id)
		     || ',' || (SELECT count(*) FROM contcount.counter_unit_log u, feed_of o
		        WHERE o.name = '$counter' AND u.counter_id = o.log_id)});
}

# rows on both shards, a step of 'read' (a batch sealed, persons bounded),
# rows after it (logged, not sealed yet)
for my $shard (@shards)
{
	$shard->safe_psql('postgres',
		'INSERT INTO events (user_id) SELECT u FROM generate_series(1, 20) u, generate_series(1, 2)');
}
$coord->safe_psql('postgres', "SELECT contcount.tick('read')", extra_params => $analyst);
for my $shard (@shards)
{
	$shard->safe_psql('postgres', 'INSERT INTO events (user_id) SELECT generate_series(1, 20)');
	like(holds($shard, 'read'), qr/^1,[1-9]\d*,[1-9]\d*,0,1$/,
		$shard->name . ': the feed of "read" holds a batch, persons and logged rows before the drop');
	like(holds($shard, 'kept'), qr/^1,/, $shard->name . ': "kept" has its feed');
}
my $kept = holds($shards[0], 'kept');

$coord->safe_psql('postgres', "SELECT contcount.drop_counter('read')", extra_params => $analyst);
for my $shard (@shards)
{
	ok($shard->poll_query_until('postgres', 'SELECT count(*) = 1 FROM contcount.shard_feed'),
		$shard->name . ': the dropped counter\'s feed is gone');
	is(holds($shard, 'read'), '0,0,0,0,0',
		$shard->name . ': nothing of the dropped counter\'s feed is left');
}
is(holds($shards[0], 'kept'), $kept, 'the kept counter\'s feed is untouched');
ok($coord->poll_query_until('postgres', 'SELECT count(*) = 2 FROM contcount.counter_shard'),
	'coordinator: the dropped counter\'s rows of counter_shard are gone, the kept one\'s stay');

# a shard down at the drop of a counter no step has read
$shards[1]->stop;
$coord->safe_psql('postgres', "SELECT contcount.drop_counter('kept')", extra_params => $analyst);
ok($shards[0]->poll_query_until('postgres', 'SELECT count(*) = 0 FROM contcount.shard_feed'),
	'the shard that is up drops the feed at once');
is(holds($shards[0], 'kept'), '0,0,0,0,0', 'and nothing of it is left there');
ok($coord->poll_query_until('postgres', 'SELECT count(*) = 1 FROM contcount.counter_shard'),
	'coordinator: only the row of the shard that is down stays');
sleep 3;
is($coord->safe_psql('postgres', 'SELECT count(*) FROM contcount.counter_shard'), '1', 'coordinator: the row of the shard that is down is not forgotten');
$shards[1]->start;
ok($shards[1]->poll_query_until('postgres', 'SELECT count(*) = 0 FROM contcount.shard_feed'),
	'the shard back up drops the feed at a later round');
ok($coord->poll_query_until('postgres', 'SELECT count(*) = 0 FROM contcount.counter_shard'),
	'coordinator: then its row is gone');
is(holds($shards[1], 'kept') . ' ' . holds($shards[1], 'read'), '0,0,0,0,0 0,0,0,0,0', 'nothing of either counter is left on the shard back up');

done_testing();
