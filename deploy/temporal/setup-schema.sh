#!/bin/sh
# One-shot job (temporalio/admin-tools image): creates Temporal's two PostgreSQL databases and brings their schemas
# to the version this admin-tools release ships. Every step is idempotent, so the job runs on every `compose up`:
#   - `create` does nothing when the database exists (the postgres12 plugin ignores "duplicate database");
#   - `setup-schema -v 0.0` skips when a schema is already there;
#   - `update-schema` applies only the versions not yet applied (this is how a Temporal upgrade migrates the schema).
# Follows temporalio/samples-server compose/scripts/setup-postgres.sh, the setup the Temporal docs point to now
# that the auto-setup image is deprecated.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS must name the PostgreSQL host}"
: "${POSTGRES_USER:?POSTGRES_USER must be set}"
: "${SQL_PASSWORD:?SQL_PASSWORD must be set (temporal-sql-tool reads the password from it)}"
port="${DB_PORT:-5432}"
db="${DBNAME:-temporal}"
visibility_db="${VISIBILITY_DBNAME:-temporal_visibility}"
schema_root="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}/postgresql/v12"
attempts="${SETUP_MAX_ATTEMPTS:-30}"
pause="${SETUP_RETRY_SECONDS:-2}"

sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$port" -u "$POSTGRES_USER" "$@"
}

# The compose healthcheck already waited for pg_isready; retry anyway so the script also works on its own.
n=1
until sql_tool --db "$db" create; do
  if [ "$n" -ge "$attempts" ]; then
    echo "setup-schema: PostgreSQL at $POSTGRES_SEEDS:$port still refuses after $attempts attempts" >&2
    exit 1
  fi
  echo "setup-schema: waiting for PostgreSQL at $POSTGRES_SEEDS:$port ($n/$attempts)"
  n=$((n + 1))
  sleep "$pause"
done
sql_tool --db "$db" setup-schema -v 0.0
sql_tool --db "$db" update-schema -d "$schema_root/temporal/versioned"

sql_tool --db "$visibility_db" create
sql_tool --db "$visibility_db" setup-schema -v 0.0
sql_tool --db "$visibility_db" update-schema -d "$schema_root/visibility/versioned"

echo "setup-schema: databases $db and $visibility_db are at the current schema version"
