#!/bin/sh
# Runs a command with environment variables taken from a Java properties file, so that a secret
# kept in one file (docker/secrets/s3-credentials.properties, mounted as the Compose secret
# /run/secrets/s3-credentials) reaches programs that read it only from their environment, without
# the secret appearing in compose.yaml, in `docker inspect` or on a command line:
#
#   env-from-properties.sh <file> <VAR>=<key> [<VAR>=<key> ...] -- <command> [<argument> ...]
#
# exports each VAR with the value of the file's key, then replaces itself with the command. The
# minio, minio-init and rest services of docker/compose.yaml start through it (the images' own
# shells run it: POSIX sh only, no other tools). It reads the simple form of the format: one
# key=value (or key: value) a line, blanks around key and value dropped, lines starting with # or !
# ignored; no backslash escapes, no continued lines. A key that is missing or empty is an error
# (status 2), and no value is ever printed.
set -eu

usage() {
  echo "usage: $0 <properties file> <VAR>=<key> ... -- <command> [<argument> ...]" >&2
  exit 2
}

[ $# -ge 1 ] || usage
file=$1
shift
if [ ! -r "$file" ]; then
  echo "$0: cannot read $file (a Compose secret: is the file there, and readable by this container's user?)" >&2
  exit 2
fi

# The value of key $1 in $file, into $value; status 1 when the file has no such key.
lookup() {
  found=1
  value=
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line#"${line%%[![:space:]]*}"}
    case $line in
      '' | '#'* | '!'*) continue ;;
    esac
    name=${line%%[=:]*}
    [ "$name" != "$line" ] || continue
    rest=${line#"$name"?}
    name=${name%"${name##*[![:space:]]}"}
    if [ "$name" = "$1" ]; then
      rest=${rest#"${rest%%[![:space:]]*}"}
      value=${rest%"${rest##*[![:space:]]}"}
      found=0
    fi
  done <"$file"
  return $found
}

while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  variable=${1%%=*}
  key=${1#*=}
  case $variable in
    '' | [0-9]* | *[!A-Za-z0-9_]*) usage ;;
  esac
  if [ "$key" = "$1" ] || [ -z "$key" ]; then
    usage
  fi
  if ! lookup "$key" || [ -z "$value" ]; then
    echo "$0: $file has no value for $key" >&2
    exit 2
  fi
  export "$variable=$value"
  shift
done
[ $# -ge 2 ] || usage
shift
exec "$@"
