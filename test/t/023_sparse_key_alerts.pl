# A sparse vector alert on a key of a counter over a protected source's
# dimension reaches a client that listens: its owner, a role that is not a
# superuser and is granted the source, creates it; another role that is not
# a superuser, and may read nothing of the counter, LISTENs on its channel
# (anyone may) and hears, at the step where the key's bounded count of the
# last two steps first reaches the threshold, one notification that names
# the key and the step and holds no count; the alert on the other key, whose
# window stays below, sends nothing.  Epsilon 1000 makes the noise
# negligible: its scales are 4 * 3 / 1000 and half that, and a draw is
# nonzero with probability below 2 e^-83.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $node = PostgreSQL::Test::Cluster->new('sparse_key_alerts');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('data', 10000);
    SELECT contcount.create_ledger('team', 10000);
    CREATE TABLE visits (person int, country text, at timestamptz DEFAULT now());
    SELECT contcount.protect_table('visits', 'visits', 'person', 'at', 'data', max_rows => 3,
                                   max_groups => 2);
    SELECT contcount.source_dimension('visits', 'country', ARRAY['de', 'fr']);
    CREATE ROLE regress_analyst LOGIN;
    CREATE ROLE regress_listener LOGIN;
    SELECT contcount.grant_ledger('team', 'regress_analyst');
    SELECT contcount.grant_source('visits', 'regress_analyst');
});
my @analyst = (extra_params => [ '-U', 'regress_analyst' ]);
$node->safe_psql('postgres', q{
    SELECT contcount.create_counter('by_country', 1, horizon => 100, step => '1 day',
        ledger => 'team', source => 'visits', dimension => 'country', mechanism => 'binary');
}, @analyst);
my ($de, $fr) = split /\n/, $node->safe_psql('postgres', q{
    SELECT contcount.create_sparse_alert('by_country', 4, 2, 1000, channel => 'visits_sparse',
        ledger => 'team', key => 'de');
    SELECT contcount.create_sparse_alert('by_country', 4, 2, 1000, channel => 'visits_sparse',
        ledger => 'team', key => 'fr');
}, @analyst);

my $s = $node->background_psql('postgres', extra_params => [ '-U', 'regress_listener' ]);
$s->query_safe('LISTEN visits_sparse');

# de: person 1 gives 5 rows at step 1 (3 count: max_rows), person 2 one at
# step 2 (windows 3, 4: reaches 4 at step 2; unbounded it would at step 1),
# person 3 one at step 3; fr: person 4 one row at each step (windows 1, 2,
# 2: never 4).
my @rows = (
	"(1, 'de'), (1, 'de'), (1, 'de'), (1, 'de'), (1, 'de'), (4, 'fr')",
	"(2, 'de'), (4, 'fr')",
	"(3, 'de'), (5, 'fr')");
for my $step (0 .. 2)
{
	$node->safe_psql('postgres', "INSERT INTO visits (person, country) VALUES $rows[$step]");
	$node->safe_psql('postgres', q{SELECT contcount.tick('by_country')}, @analyst);
}

my @heard = map { $_->[1] } notifications_heard($s, 1);
$s->quit;

is_deeply(
	\@heard,
	[
		qq({"alert" : $de, "counter" : "by_country", "key" : "de", "kind" : "sparse_vector", "step" : 2, "window_steps" : 2, "threshold" : 4, "positives" : 1, "max_positives" : 1})
	],
	'one notification, from the alert on de, at the step its bounded window reaches 4, naming the key and no count');
is( $node->safe_psql('postgres',
		q{SELECT string_agg(key || ':' || coalesce(fired_step::text, '-') || ':' || positives,
		                    ' ' ORDER BY key)
		  FROM contcount.alerts}, @analyst),
	'de:2:1 fr:-:0',
	'the view shows the answer of de, none of fr');
is( $node->safe_psql('postgres',
		q{SELECT string_agg(ledger || ':' || epsilon, ' ' ORDER BY ledger)
		  FROM contcount.charges WHERE function = 'create_sparse_alert'}),
	'data:1000 data:1000 team:1000 team:1000',
	'each alert charged the team and the data once');

done_testing();
