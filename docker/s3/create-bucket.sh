#!/bin/sh
# The minio-init service of docker/compose.yaml: creates the bucket of the Iceberg warehouse in
# MinIO if it is not there yet, and exits. Runs in the minio/mc image (POSIX sh and mc only),
# started by env-from-properties.sh, which exports the access key and secret of the credentials
# file as S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY. Running it again changes nothing.
set -eu

endpoint=${S3_ENDPOINT:-http://minio:9000}
bucket=${BUCKET:-warehouse}

# An alias of this container's own mc configuration; the keys are on mc's command line only inside
# this one-shot container.
mc alias set store "$endpoint" "$S3_ACCESS_KEY_ID" "$S3_SECRET_ACCESS_KEY" --api S3v4 >/dev/null
mc mb --ignore-existing "store/$bucket"
echo "bucket $bucket is ready at $endpoint"
