# Sourced by .ci/contract and .ci/clients/run: starts the built budget-server on a throwaway embedded PostgreSQL
# cluster and stops both again.
#
#   start_server WORK [serve options…]   data in WORK/db, log in WORK/server.log; sets server_pid and base_url
#   stop_server                          SIGTERM (the server drains and stops its cluster), SIGKILL after 30 s
#   stop_cluster WORK                    stops a cluster a killed server left running
#
# WORK must be a folder the postgres OS user can enter (chmod 755): the embedded cluster runs as postgres
# when we are root. The caller sets `binary` to the server to run.

server_pid=""
base_url=""

start_server() {
    local work="$1"
    shift
    local port
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    base_url="http://127.0.0.1:$port"
    echo "starting $binary on $base_url (data in $work/db)"
    "$binary" serve --host 127.0.0.1 --port "$port" --data-dir "$work/db" "$@" >"$work/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 120); do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "the server exited during start-up" >&2
            return 1
        fi
        if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$base_url/ready" 2>/dev/null; then
            return 0
        fi
        sleep 0.5
    done
    echo "the server was not ready within 60 s" >&2
    return 1
}

stop_server() {
    [ -n "$server_pid" ] || return 0
    if kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        # SIGTERM drains requests (at most 10 s) and stops the embedded cluster; then give up waiting.
        for _ in $(seq 1 150); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
        if kill -0 "$server_pid" 2>/dev/null; then
            echo "the server did not stop on SIGTERM; killing it" >&2
            kill -KILL "$server_pid" 2>/dev/null || true
        fi
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

stop_cluster() {
    local work="$1"
    [ -f "$work/db/data/postmaster.pid" ] || return 0
    local pg_ctl
    pg_ctl="$(command -v pg_ctl || ls -1d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1)"
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$pg_ctl" stop -D "$work/db/data" -m immediate -s 2>/dev/null || true
    else
        "$pg_ctl" stop -D "$work/db/data" -m immediate -s 2>/dev/null || true
    fi
}
