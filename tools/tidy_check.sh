#!/bin/bash
# clang-tidy-14 with the checks of .clang-tidy (the reasons are there) over
# the C++ sources tracked by git: lib/, tools/, bench/, samples/, tests/
# and fuzz/ (*.cc; the repository's headers through the sources that
# include them). Prints each finding once (file:line:col: message [check];
# a source that does not compile is an error too), then "N passed, N
# failed" last: a source passes when clang-tidy reports nothing in it or in
# the repository headers it includes. Exit status 0 only when all passed.
#   bash tools/tidy_check.sh [FILE...]   # default: every source
#   bash tools/tidy_check.sh --record    # every source, then tools/tidy.record
#                                        # rewritten with the clean digests
# The compile commands are the CMake build's (CMakeLists.txt configured
# with CMAKE_EXPORT_COMPILE_COMMANDS=ON, nothing built): its entries for
# the library and the CLI, and its library flags (include folders, CUDA's
# headers, -std=c++17) for the sources CMake does not build, with what
# their BUILD files add (ptx_templates/<part>.inc as Bazel's genrules copy
# them; the cuBLAS stubs' -DCREATE_STATUS). PTXGEN_TIDY_JOBS clang-tidy
# processes at once (default 2: about 8 minutes on CI's 2 cores);
# PTXGEN_TIDY_KEEP=1 keeps and names the work folder.
# A source's clean result is remembered under the digest of everything
# clang-tidy reads for it: its text after clang-14's preprocessor (every
# header it includes, with their paths), its flags, .clang-tidy and
# clang-tidy's version (not the processor it names: findings do not depend
# on the machine). A source whose digest passed before passes without
# a run; one with findings runs every time. PTXGEN_TIDY_CACHE names the
# folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/ptxgen-tidy; "off": no
# digests, every source run).
# The digests in tools/tidy.record (checked in, like the golden files) pass
# too, so a clean clone (CI) runs clang-tidy only on what changed since
# the record was written: a stale record costs time, never a finding, as a
# changed source has a new digest.
set -uo pipefail
cd "$(dirname "$0")/.."
record=tools/tidy.record
write_record=0
if [ "${1:-}" = "--record" ]; then
  write_record=1
  shift
  [ "$#" -eq 0 ] || { echo "usage: bash tools/tidy_check.sh --record" >&2; exit 2; }
fi
bash tools/setup.sh || exit 1
root=$PWD
root_re=$(printf '%s' "$root" | sed 's/[][\\.*^$+?(){}|]/\\&/g')  # the path in a regex
jobs=${PTXGEN_TIDY_JOBS:-2}
cache=${PTXGEN_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ptxgen-tidy}
[ "$cache" = "off" ] || mkdir -p "$cache" || cache=off
if [ "$cache" = "off" ] && [ "$write_record" = 1 ]; then
  echo "tidy_check: --record needs the digests, which PTXGEN_TIDY_CACHE=off turns off" >&2
  exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxgen-tidy.XXXXXX")
if [ "${PTXGEN_TIDY_KEEP:-0}" = "1" ]; then
  echo "tidy_check: work folder $work"
else
  trap 'rm -rf "$work"' EXIT
fi
start=$SECONDS

if [ "$#" -gt 0 ]; then
  mapfile -t sources < <(git ls-files -- "$@" | grep -E '\.cc$')
else
  mapfile -t sources < <(git ls-files -- 'lib/*.cc' 'tools/*.cc' 'bench/*.cc' 'samples/*.cc' \
                                         'tests/*.cc' 'fuzz/*.cc')
fi
present=()
for source in "${sources[@]}"; do
  [ -f "$source" ] && present+=("$source")  # not deleted in the work tree
done
if [ "${#present[@]}" -eq 0 ]; then
  echo "tidy_check: no C++ sources to check"
  echo "0 passed, 1 failed"
  exit 1
fi

# The compile commands.
if ! cmake -S "$root" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/cmake.log" 2>&1; then
  tail -n 30 "$work/cmake.log"
  echo "tidy_check: cmake configure failed"
  echo "0 passed, 1 failed"
  exit 1
fi
mkdir -p "$work/db" "$work/include/ptx_templates" "$work/logs"
for template in ptx_templates/*/*.cu; do
  mkdir -p "$work/include/$(dirname "$template")"
  cp "$template" "$work/include/${template%.cu}.inc"
done
if ! python3 - "$root" "$work" "${present[@]}" <<'EOF'
import json, os, shlex, sys

root, work, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
cmake = json.load(open(os.path.join(work, "build", "compile_commands.json")))
by_file = {entry["file"]: entry for entry in cmake}
# The library's flags, without its -o and -c: for the sources CMake does not build.
library = next(e for e in cmake if e["file"].startswith(os.path.join(root, "lib") + os.sep))
flags, words = [], iter(shlex.split(library["command"]))
for word in words:
    if word in ("-o", "-c"):
        next(words, None)
    else:
        flags.append(word)
flags.append("-I" + os.path.join(work, "include"))  # ptx_templates/<part>.inc
# What a BUILD file adds to one source (tests/gemm/BUILD.bazel builds the
# stubs once per CREATE_STATUS; 0 is CUBLAS_STATUS_SUCCESS).
extra = {
    "tests/gemm/cublas_stub.cc": ["-DCREATE_STATUS=0"],
    "tests/gemm/cublaslt_stub.cc": ["-DCREATE_STATUS=0"],
}
entries = []
for source in sources:
    path = os.path.join(root, source)
    if path in by_file:
        entry = by_file[path]
        arguments = shlex.split(entry["command"])
    else:
        arguments = flags + extra.get(source, []) + ["-c", path]
        entry = {"directory": os.path.join(work, "build"), "file": path,
                 "arguments": arguments}
    entries.append(entry)
    # The same command as clang-14's preprocessor, for the cache's digest.
    words, preprocess = iter(arguments[1:]), ["clang++-14", "-E"]
    for word in words:
        if word in ("-o", "-c"):
            next(words, None)
        else:
            preprocess.append(word)
    preprocess.append(path)
    with open(os.path.join(work, "logs", source.replace("/", "_") + ".pp"), "w") as out:
        out.write("\0".join(preprocess))
json.dump(entries, open(os.path.join(work, "db", "compile_commands.json"), "w"), indent=1)
EOF
then
  echo "tidy_check: writing the compile commands failed"
  echo "0 passed, 1 failed"
  exit 1
fi

# clang-tidy, a source a process; its output and exit status beside each
# other. A digest remembered clean in the cache stands for a run.
export PTXGEN_TIDY_WORK=$work PTXGEN_TIDY_ROOT=$root PTXGEN_TIDY_DB=$work/db PTXGEN_TIDY_LOGS=$work/logs
export PTXGEN_TIDY_CACHE_DIR=$cache PTXGEN_TIDY_RECORD=$root/$record
export PTXGEN_TIDY_HEADERS="^$root_re/(include|lib|tools|bench|samples|tests|fuzz)/"
# The version without its "Host CPU:" line, which names the machine's
# processor: the record must match on any CI machine.
export PTXGEN_TIDY_VERSION="$(clang-tidy-14 --version | grep -v 'Host CPU:'; cat .clang-tidy)"
printf '%s\0' "${present[@]}" | xargs -0 -n 1 -P "$jobs" bash -c '
  log=$PTXGEN_TIDY_LOGS/$(echo "$1" | tr / _)
  digest=
  if [ "$PTXGEN_TIDY_CACHE_DIR" != off ]; then
    mapfile -d "" -t preprocess < "$log.pp"
    # The work folder (templates, the CMake build) and the checkout named
    # alike in every run and clone: findings are reported relative to both.
    digest=$({ echo "$PTXGEN_TIDY_VERSION"; tr "\0" " " < "$log.pp"; echo; "${preprocess[@]}" 2>&1; } |
             sed -e "s|$PTXGEN_TIDY_WORK|@work@|g" -e "s|$PTXGEN_TIDY_ROOT|@root@|g" |
             sha256sum | cut -c1-64)
    echo "$digest" > "$log.digest"
    if [ -f "$PTXGEN_TIDY_CACHE_DIR/$digest" ] ||
       grep -qxF "$digest" "$PTXGEN_TIDY_RECORD" 2>/dev/null; then
      : > "$log.out"; echo 0 > "$log.rc"; echo cached > "$log.cached"
      exit 0
    fi
  fi
  clang-tidy-14 -p "$PTXGEN_TIDY_DB" --quiet --header-filter="$PTXGEN_TIDY_HEADERS" "$1" \
    > "$log.out" 2>&1
  status=$?
  echo $status > "$log.rc"
  # Clean: no finding in the repository and a zero exit status.
  if [ -n "$digest" ] && [ "$status" -eq 0 ] && ! grep -qE ": (warning|error): " "$log.out"; then
    touch "$PTXGEN_TIDY_CACHE_DIR/$digest"
  fi' _

# A finding is a "path:line:col: warning|error: ..." line in the repository
# (not in a system header); each is printed once, however many sources
# include its header.
passed=0
failed=0
: > "$work/findings"
: > "$work/clean"
for source in "${present[@]}"; do
  log=$work/logs/$(echo "$source" | tr / _)
  found=$(grep -E "^$root_re/[^ ]+:[0-9]+:[0-9]+: (warning|error): " "$log.out" |
          cut -c $((${#root} + 2))-)
  status=$(cat "$log.rc" 2>/dev/null || echo 1)
  if [ -z "$found" ] && [ "$status" -ne 0 ]; then
    found="$source: error: clang-tidy-14 exited $status: $(grep -m 1 -E 'error' "$log.out")"
  fi
  if [ -n "$found" ]; then
    echo "$found" >> "$work/findings"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
    cat "$log.digest" >> "$work/clean" 2>/dev/null
  fi
done
if [ "$write_record" = 1 ]; then
  sort -u "$work/clean" > "$record"
  echo "tidy_check: $record: $(grep -c . "$record") clean digests"
fi
sort -u "$work/findings" | sort -t: -k1,1 -k2,2n -k3,3n
echo "tidy_check: $(sort -u "$work/findings" | grep -c .) findings in ${#present[@]} sources" \
  "in $((SECONDS - start)) s (clang-tidy-14, .clang-tidy, $jobs jobs;" \
  "$(find "$work/logs" -name '*.cached' | wc -l) clean by digest, cache: $cache)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
