#!/bin/sh
# Two kb serve replicas over one PostgreSQL database: what one is told, the other knows at once.
# KB_DATABASE_URL names the database, e.g. postgres://kb:PASSWORD@db.internal:5432/kb: an empty
# database the user owns, where kb creates its tables on the first start.
set -eu
: "${KB_DATABASE_URL:?set KB_DATABASE_URL to a postgres:// URL}"
PORT_A=${PORT_A:-8081}
PORT_B=${PORT_B:-8082}

# Tokens are kept in the database (as hashes only), so one made here works on every replica.
T=$(kb serve token create --org acme)

# Two replicas; in production each runs on its own host, behind one load-balanced URL.
kb serve --port "$PORT_A" --log-level warn &
A=$!
kb serve --port "$PORT_B" --log-level warn &
B=$!
trap 'kill $A $B' EXIT
for port in "$PORT_A" "$PORT_B"; do
  until KB_URL="http://127.0.0.1:$port" kb health >/dev/null 2>&1; do sleep 0.2; done
done

# Created through one replica...
KB_URL="http://127.0.0.1:$PORT_A" KB_TOKEN="$T" kb ns create docs --description "Product docs"
# ...is listed through the other,
KB_URL="http://127.0.0.1:$PORT_B" KB_TOKEN="$T" kb ns list
# and its key is taken there too: kb exits 5 (conflict).
status=0
KB_URL="http://127.0.0.1:$PORT_B" KB_TOKEN="$T" kb ns create docs 2>/dev/null || status=$?
echo "docs again, through the other replica: exit $status"
