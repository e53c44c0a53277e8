#!/usr/bin/env bash
# Prints the path of MultiKueue's manager cluster's admin kubeconfig.
. "$(dirname "$0")/lib.sh"
echo "$DIR/admin.conf"
