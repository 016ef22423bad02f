#!/bin/sh
echo "coverage is not collected in ptxgen builds" >&2
exit 1
