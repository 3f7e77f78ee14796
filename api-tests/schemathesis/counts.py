"""Examples schemathesis ran per operation and phase, from its NDJSON report.

Usage: python3 counts.py REPORT.ndjson OPENAPI.json  ->  a Markdown table on stdout (the
one recorded in docs/API_DOCS.md, "Fuzzing"): one row per documented operation, and one
for the methods a path does not have (the coverage phase's probes, answered 405).
"""
import collections
import json
import sys


def main(path: str, openapi: str) -> None:
    documented = {
        f"{method.upper()} {route}"
        for route, item in json.load(open(openapi, encoding="utf-8"))["paths"].items()
        for method in item
    }
    other = "other methods (405)"
    counts = collections.defaultdict(collections.Counter)
    for line in open(path, encoding="utf-8"):
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        phase = finished["phase"]
        for case in finished["recorder"].get("cases", {}).values():
            value = case["value"]
            operation = f'{value["method"]} {value["path"]}'
            counts[operation if operation in documented else other][phase] += 1
    phases = ["examples", "coverage", "fuzzing", "stateful"]
    print("| operation | " + " | ".join(phases) + " | total |")
    print("|---|" + "---:|" * (len(phases) + 1))
    total = collections.Counter()
    for operation in sorted(counts, key=lambda o: (o == other, o)):
        row = counts[operation]
        total.update(row)
        cells = [str(row[p]) for p in phases]
        name = operation if operation == other else f"`{operation}`"
        print(f"| {name} | " + " | ".join(cells) + f" | {sum(row.values())} |")
    cells = [str(total[p]) for p in phases]
    print("| **all** | " + " | ".join(cells) + f" | {sum(total.values())} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
