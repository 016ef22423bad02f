"""Counts test cases from Bazel's test.xml files and prints the summary.

Usage: test_summary.py TESTLOGS_DIR BAZEL_LOG
Only the targets BAZEL_LOG reports are counted (a folder of test.xml files
with no Bazel log, /dev/null, counts them all): TESTLOGS_DIR keeps the
results of targets an earlier run tested and this one left out. Targets
that failed to build, timed out or left no result count as one failure
each. The last line is "N passed, N failed"; skipped cases (GPU
tests without a GPU) are reported on the line before. Exit 1 on failures.
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ElementTree


# A target that ran: its cases are in its test.xml (those that did not run
# count in count_broken_targets).
TARGET = re.compile(r"^//(\S*):(\S+)\s+(?:\(cached\) )?(?:PASSED|FLAKY|FAILED(?! TO BUILD))",
                    re.MULTILINE)


def result_files(testlogs, log_text):
    """The test.xml files of the targets the log reports, or all of them."""
    root = pathlib.Path(testlogs)
    targets = TARGET.findall(log_text)
    if not targets:
        return root.rglob("test.xml")
    return [path for package, name in targets
            for path in (root / package / name).rglob("test.xml")]


def count_cases(paths):
    passed = failed = skipped = 0
    for path in paths:
        for case in ElementTree.parse(path).iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif (case.get("result") == "skipped" or case.get("status") == "notrun"
                  or case.find("skipped") is not None):
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


def count_broken_targets(log_text):
    pattern = re.compile(r"^//\S+\s+(?:\(cached\) )?(FAILED TO BUILD|NO STATUS|TIMEOUT)",
                         re.MULTILINE)
    return len(pattern.findall(log_text))


def main():
    testlogs, log = sys.argv[1], sys.argv[2]
    log_text = pathlib.Path(log).read_text(errors="replace")
    passed, failed, skipped = count_cases(result_files(testlogs, log_text))
    failed += count_broken_targets(log_text)
    print(f"{skipped} skipped (GPU tests without a GPU)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
