# Alerts on a key of a counter over a source's dimension reach a client
# that listens: a role that is not a superuser, allowed to read the
# counter, LISTENs on its alerts' channel and hears, at the step where the
# key's released running count (as history_by_key() shows it) first
# reaches the threshold, one notification whose payload names that key,
# the step and the released value; an alert on another key, whose count
# stays below, sends nothing.  The counter's epsilon is large enough that
# each release is its exact count.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $node = PostgreSQL::Test::Cluster->new('key_alerts');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('app', 10000);
    CREATE TABLE visits (person int, country text, at timestamptz DEFAULT now());
    SELECT contcount.protect_table('visits', 'visits', 'person', 'at', 'app', max_rows => 3,
                                   max_groups => 2);
    SELECT contcount.source_dimension('visits', 'country', ARRAY['de', 'fr']);
    SELECT contcount.create_counter('by_country', 1000, horizon => 100, step => '1 day',
        beta => 1e-9, ledger => 'app', source => 'visits', dimension => 'country',
        mechanism => 'binary');
    CREATE ROLE regress_listener LOGIN;
    SELECT contcount.grant_counter('by_country', 'regress_listener');
});
my @listener = (extra_params => [ '-U', 'regress_listener' ]);
my ($de, $fr) = split /\n/, $node->safe_psql('postgres', q{
    SELECT contcount.create_alert('by_country', 3, 'visits_alert', 'de');
    SELECT contcount.create_alert('by_country', 3, 'visits_alert', 'fr');
}, @listener);

my $s = $node->background_psql('postgres', @listener);
$s->query_safe('LISTEN visits_alert');

# de: 2 rows at step 1, 2 more at step 2 (4: crosses 3), 1 at step 3;
# fr: 1 row at step 2.
my @rows = ("(1, 'de'), (2, 'de')", "(3, 'de'), (4, 'de'), (5, 'fr')", "(6, 'de')");
for my $step (0 .. 2)
{
	$node->safe_psql('postgres', "INSERT INTO visits (person, country) VALUES $rows[$step]");
	$node->safe_psql('postgres', q{SELECT contcount.tick('by_country')});
}
is( $node->safe_psql('postgres',
		q{SELECT string_agg(key || ':' || t || ':' || noisy_count, ' ' ORDER BY key, t)
		  FROM contcount.history_by_key('by_country')}, @listener),
	'de:1:2 de:2:4 de:3:5 fr:1:0 fr:2:1 fr:3:1',
	'the keys release their exact counts');

my @heard = map { $_->[1] } notifications_heard($s, 1);
$s->quit;

is_deeply(
	\@heard,
	[
		qq({"alert" : $de, "counter" : "by_country", "key" : "de", "step" : 2, "value" : 4, "threshold" : 3})
	],
	'one notification, from the alert on de, at the step its count crosses 3, naming the key');
is( $node->safe_psql('postgres',
		q{SELECT string_agg(key || ':' || coalesce(fired_step::text, '-'), ' ' ORDER BY key)
		  FROM contcount.alerts}, @listener),
	'de:2 fr:-',
	'the view shows the crossing of de, none of fr');

done_testing();
