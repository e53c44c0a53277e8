#!/usr/bin/env bash
# Prints the path of the local cluster's admin kubeconfig.
. "$(dirname "$0")/lib.sh"
echo "$DIR/admin.conf"
