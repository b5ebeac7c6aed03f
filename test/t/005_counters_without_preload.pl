# An application's inserts never fail because of contcount's configuration.
# Without shared_preload_libraries there is no step worker, and the library
# is loaded by a trigger's first call in each session, in the middle of the
# statement that fired it; in a database that is no longer contcount.database
# the worker is elsewhere.  Either way every form of the trigger keeps
# counting exactly, the counts wait in contcount.counter_delta, and they are
# stepped once contcount is back.  The application is a role that is not a
# superuser, and a table of someone else's is still refused.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('without_preload');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('app', 100);
    CREATE ROLE app LOGIN;
    CREATE ROLE intruder LOGIN;
    SELECT contcount.grant_ledger('app', 'app');
    CREATE SCHEMA app AUTHORIZATION app;
    CREATE SCHEMA intruder AUTHORIZATION intruder;
    CREATE DATABASE elsewhere;
});

# As the application: run sql in a session of its own, which must succeed.
sub app
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql, extra_params => [ '-U', 'app' ]);
}

# The same, returning psql's exit code, output and errors.
sub app_psql
{
	my ($sql) = @_;
	my ($stdout, $stderr);
	my $ret = $node->psql('postgres', $sql, stdout => \$stdout, stderr => \$stderr,
		extra_params => [ '-U', 'app' ]);
	return ($ret, $stdout, $stderr);
}

app(q{
    SELECT contcount.create_counter(c, 1, horizon => 100, step => '1 day', ledger => 'app', mechanism => 'binary')
    FROM unnest(ARRAY['by_row', 'by_statement', 'by_transition']) c;
    -- events feed a counter with each form of the trigger
    CREATE TABLE app.events (i int);
    CREATE TRIGGER by_row AFTER INSERT ON app.events
        FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('by_row');
    CREATE TRIGGER by_transition AFTER INSERT ON app.events REFERENCING NEW TABLE AS inserted
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('by_transition');
    CREATE TRIGGER by_statement AFTER INSERT ON app.events
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('by_statement');
    -- orders only with a statement trigger, the one that needs the hooks;
    -- and another that refuses statements of more than 100 rows, after it
    CREATE TABLE app.orders (i int PRIMARY KEY);
    CREATE TRIGGER by_statement AFTER INSERT ON app.orders
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('by_statement');
    CREATE FUNCTION app.at_most_100() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF (SELECT count(*) FROM inserted) > 100 THEN
            RAISE EXCEPTION 'too many orders at once';
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER zz_at_most_100 AFTER INSERT ON app.orders REFERENCING NEW TABLE AS inserted
        FOR EACH STATEMENT EXECUTE FUNCTION app.at_most_100();
    CREATE FUNCTION app.place_orders(first int, n int) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO app.orders SELECT generate_series(first, first + n - 1);
    END $$;
});

# Every session below starts without the library: each first statement is
# one that loads it.
sub inserts
{
	my ($phase, $first) = @_;
	app(q{INSERT INTO app.events SELECT generate_series(1, 5)});
	app(qq{COPY app.events FROM STDIN;\n1\n2\n3\n\\.\n});
	app(qq{INSERT INTO app.orders SELECT generate_series($first, $first + 6)});
	app(qq{SELECT app.place_orders($first + 100, 11)});
	app(qq{COPY app.orders FROM STDIN;\n@{[$first + 200]}\n@{[$first + 201]}\n\\.\n});
	app(qq{INSERT INTO app.orders VALUES ($first + 300), ($first + 301)
	       ON CONFLICT DO NOTHING});
	# a statement that fails after its rows were counted, caught: not counted
	app(qq{DO \$\$
	    BEGIN
	        BEGIN
	            INSERT INTO app.orders SELECT generate_series($first + 1000, $first + 1200);
	        EXCEPTION WHEN raise_exception THEN NULL;
	        END;
	        INSERT INTO app.orders SELECT generate_series($first + 400, $first + 416);
	    END \$\$});
	# rolled back: not counted
	app(q{BEGIN; INSERT INTO app.events SELECT generate_series(1, 13); ROLLBACK;});
	# several statements in one session: the first loads the library
	app(qq{INSERT INTO app.orders VALUES ($first + 500);
	       INSERT INTO app.orders SELECT generate_series($first + 501, $first + 503);
	       INSERT INTO app.events SELECT generate_series(1, 2)});
	pass("$phase: every insert succeeds");
	return;
}

sub counted
{
	my ($counter) = @_;
	return $node->safe_psql('postgres',
		"SELECT exact_released || ' ' || pending FROM contcount.counter_internals('$counter')");
}

sub check_counts
{
	my ($phase) = @_;
	my $events = $node->safe_psql('postgres', 'SELECT count(*) FROM app.events');
	my $orders = $node->safe_psql('postgres', 'SELECT count(*) FROM app.orders');
	for my $counter (qw(by_row by_statement by_transition))
	{
		app("SELECT contcount.tick('$counter')");
		my $rows = $events + ($counter eq 'by_statement' ? $orders : 0);
		is(counted($counter), "$rows 0", "$phase: $counter stepped every committed row");
	}
	return;
}

# Without shared_preload_libraries.
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$node->restart;
inserts('not preloaded', 1);
my ($ret, $out, $err) = $node->psql('postgres', q{
    CREATE TABLE intruder.mine (i int);
    CREATE TRIGGER feed AFTER INSERT ON intruder.mine
        FOR EACH STATEMENT EXECUTE FUNCTION contcount.count_inserts('by_statement');
    INSERT INTO intruder.mine SELECT generate_series(1, 1000);
}, extra_params => [ '-U', 'intruder' ]);
is($ret, 0, 'not preloaded: an insert into a table that may not feed the counter goes through');
like($err, qr/WARNING:  table "mine" may not feed counter "by_statement"/,
	'not preloaded: and its trigger counts nothing, with a warning');
($ret, $out, $err) = app_psql(q{SELECT contcount.tick('by_row')});
like($err, qr/must be loaded through shared_preload_libraries/,
	'not preloaded: tick says what is missing');
is($node->safe_psql('postgres', 'SELECT count(*) > 0 FROM contcount.counter_delta'),
	't', 'not preloaded: the counts wait in counter_delta');

# Back in shared_preload_libraries: the worker steps them all.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'");
$node->restart;
check_counts('preloaded again');

# The worker moved to another database: this one's counters keep counting.
$node->append_conf('postgresql.conf', "contcount.database = 'elsewhere'");
$node->restart;
inserts('contcount.database elsewhere', 10000);
$node->append_conf('postgresql.conf', "contcount.database = 'postgres'");
$node->restart;
check_counts('contcount.database back');

done_testing();
