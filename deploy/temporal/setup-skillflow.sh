#!/bin/sh
# One-shot job (temporalio/admin-tools image, after the server is up): makes sure skillflow's namespace exists with
# the configured retention and that skillflow's custom search attributes are registered in it. Safe to rerun:
# an existing namespace gets its retention updated, an attribute that already exists as Keyword is left alone, and
# an attribute that exists with another type stops the job (that needs a person; see docs/deployment.md).
set -eu

address="${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS must be host:port of the Temporal frontend}"
namespace="${TEMPORAL_NAMESPACE:-default}"
days="${SKILLFLOW_RETENTION_DAYS:-30}"
names="${SKILLFLOW_SEARCH_ATTRIBUTES:?SKILLFLOW_SEARCH_ATTRIBUTES must list the search attribute names, space-separated}"
attempts="${SETUP_MAX_ATTEMPTS:-60}"
pause="${SETUP_RETRY_SECONDS:-2}"
temporal="${TEMPORAL_CLI:-temporal}"

case "$days" in
  '' | *[!0-9]*) echo "setup: SKILLFLOW_RETENTION_DAYS=$days is not a whole number of days" >&2; exit 2 ;;
esac
if [ "$days" -lt 1 ] || [ "$days" -gt 3650 ]; then
  echo "setup: SKILLFLOW_RETENTION_DAYS=$days must be from 1 to 3650" >&2
  exit 2
fi
retention="$((days * 24))h"

give_up() {
  echo "setup: $1 after $attempts attempts" >&2
  exit 1
}

# 1. The frontend answers health checks.
n=1
until "$temporal" operator cluster health --address "$address" >/dev/null 2>&1; do
  [ "$n" -ge "$attempts" ] && give_up "Temporal at $address is not healthy"
  echo "setup: waiting for Temporal at $address ($n/$attempts)"
  n=$((n + 1))
  sleep "$pause"
done
echo "setup: Temporal at $address is serving"

# 2. The namespace exists and keeps closed workflows for the configured number of days.
n=1
while :; do
  if "$temporal" operator namespace describe --address "$address" --namespace "$namespace" >/dev/null 2>&1; then
    if "$temporal" operator namespace update --address "$address" --namespace "$namespace" --retention "$retention"; then
      echo "setup: namespace $namespace exists; retention set to $days days"
      break
    fi
  elif "$temporal" operator namespace create --address "$address" --namespace "$namespace" --retention "$retention" \
    --description "skillflow sessions and turns"; then
    echo "setup: namespace $namespace created with $days days of retention"
    break
  fi
  [ "$n" -ge "$attempts" ] && give_up "could not create or update namespace $namespace"
  n=$((n + 1))
  sleep "$pause"
done

# 3. Every custom search attribute is registered as Keyword.
for name in $names; do
  n=1
  while :; do
    if out=$("$temporal" operator search-attribute create --address "$address" --namespace "$namespace" \
      --name "$name" --type Keyword 2>&1); then
      echo "setup: search attribute $name is registered as Keyword"
      break
    fi
    case "$out" in
      *"different type"*)
        echo "setup: $out" >&2
        echo "setup: $name exists in namespace $namespace with a type other than Keyword; skillflow cannot use it." >&2
        exit 1
        ;;
      *"already exists"*)
        echo "setup: search attribute $name already exists"
        break
        ;;
    esac
    # Typically the namespace was created a moment ago and the frontend's namespace cache has not caught up.
    [ "$n" -ge "$attempts" ] && { echo "setup: $out" >&2; give_up "could not register $name"; }
    n=$((n + 1))
    sleep "$pause"
  done
done

# 4. All of them are visible in the namespace (what workers and the API will see).
n=1
while :; do
  listed=$("$temporal" operator search-attribute list --address "$address" --namespace "$namespace" 2>&1 || true)
  missing=""
  for name in $names; do
    printf '%s\n' "$listed" | grep -qw "$name" || missing="$missing $name"
  done
  [ -z "$missing" ] && break
  [ "$n" -ge "$attempts" ] && give_up "search attributes still not listed:$missing"
  n=$((n + 1))
  sleep "$pause"
done
echo "setup: done: namespace $namespace, retention $days days, search attributes: $names"
