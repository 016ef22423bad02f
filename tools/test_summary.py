"""Counts test cases from Bazel's test.xml files and prints the summary.

Usage: test_summary.py TESTLOGS_DIR BAZEL_LOG
Targets that failed to build, timed out or left no result count as one
failure each. The last line is "N passed, N failed"; skipped cases (GPU
tests without a GPU) are reported on the line before. Exit 1 on failures.
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ElementTree


def count_cases(testlogs):
    passed = failed = skipped = 0
    for path in pathlib.Path(testlogs).rglob("test.xml"):
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
    passed, failed, skipped = count_cases(testlogs)
    failed += count_broken_targets(pathlib.Path(log).read_text(errors="replace"))
    print(f"{skipped} skipped (GPU tests without a GPU)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
