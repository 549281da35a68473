#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for running the embedded Temporal
# server on PostgreSQL (`starter dev --temporal-postgres`, and the
# integration test TestSliceOnPostgres via JOINERY_TEST_POSTGRES).
#
#   hack/postgres.sh start DIR [PORT]   install Debian's postgresql if missing,
#                                       create a cluster in DIR/data, start it
#                                       on 127.0.0.1:PORT (default: the first
#                                       free port from 25432) and print the
#                                       DSN on stdout
#   hack/postgres.sh stop DIR           stop it (DIR stays; remove it yourself)
#
# The cluster has a superuser `postgres` (trusted only on its unix socket in
# DIR/data) and a user `temporal` (password `temporal`, CREATEDB) that the
# embedded server logs in as over TCP, with scram-sha-256. Temporal's
# databases are created by the embedded server itself, as Temporal's
# `temporal-sql-tool create-database` would. As root the server runs as the
# `postgres` user (PostgreSQL refuses to run as root). Durability is relaxed
# (fsync off): the cluster is for tests; a Temporal restart still reads
# everything back from it.
set -euo pipefail

cmd=${1:?usage: hack/postgres.sh start DIR [PORT] | stop DIR}
dir=${2:?usage: hack/postgres.sh start DIR [PORT] | stop DIR}
port=${3:-}

bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	if [ -z "$d" ] || [ ! -x "$d/initdb" ]; then
		echo "hack/postgres.sh: no PostgreSQL server binaries under /usr/lib/postgresql" >&2
		return 1
	fi
	echo "$d"
}

# as runs a command as the postgres user when we are root.
as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

install_server() {
	if dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed"; then
		return
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "hack/postgres.sh: Debian's postgresql package is not installed (apt-get install postgresql, as root)" >&2
		exit 1
	fi
	local t0
	t0=$(date +%s)
	echo "hack/postgres.sh: installing Debian's postgresql package" >&2
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
	echo "hack/postgres.sh: installed in $(($(date +%s) - t0))s" >&2
}

case "$cmd" in
start)
	install_server
	bin=$(bindir)
	if [ -z "$port" ]; then
		port=25432
		# A port something answers on is taken (bash's /dev/tcp connects).
		while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
			port=$((port + 1))
			if [ "$port" -gt 25499 ]; then
				echo "hack/postgres.sh: no free port in 25432-25499" >&2
				exit 1
			fi
		done
	fi
	mkdir -p "$dir/data"
	dir=$(cd "$dir" && pwd)
	data=$dir/data
	chmod 755 "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir" "$data"
	fi
	chmod 700 "$data"
	if [ ! -f "$data/PG_VERSION" ]; then
		as "$bin/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
			-E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 ||
			{ cat "$dir/initdb.log" >&2; exit 1; }
	fi
	as "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
	as "$bin/psql" -h "$data" -p "$port" -U postgres -d postgres -qtA -v ON_ERROR_STOP=1 >/dev/null <<-'SQL'
		DO $$ BEGIN
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'temporal') THEN
		    CREATE ROLE temporal LOGIN CREATEDB PASSWORD 'temporal';
		  END IF;
		END $$;
	SQL
	echo "postgres://temporal:temporal@127.0.0.1:$port/temporal?sslmode=disable"
	;;
stop)
	bin=$(bindir)
	if [ -f "$dir/data/postmaster.pid" ]; then
		as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	fi
	;;
*)
	echo "usage: hack/postgres.sh start DIR [PORT] | stop DIR" >&2
	exit 2
	;;
esac
