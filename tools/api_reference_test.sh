#!/bin/bash
# docs/API.md is what tools/api_reference.py generates from the headers now,
# and every public declaration has a comment: fails otherwise, saying which.
set -u
exec python3 "$1" --check
