#!/usr/bin/env bash
# Prints the path of the benchmark cluster's admin kubeconfig.
. "$(dirname "$0")/lib.sh"
echo "$DIR/admin.conf"
