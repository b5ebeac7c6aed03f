# Fair shares of the server's room: no counter takes more than its turn of
# the step worker, and a dropped ledger gives its slot back, for good.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('fair');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
contcount.max_ledgers = 4
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

done_testing();
