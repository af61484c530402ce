#!/usr/bin/python3
"""Parses a Prometheus text exposition with prometheus_client's own parser (test tooling).

Reads the exposition on standard input and prints its samples as JSON, one object:
    {"families": {"<family>": "<type>", ...}, "samples": {"<sample name>{<label>=<value>,...}": <value>, ...}}
labels sorted by name. A text the parser rejects exits 1 with its error; without prometheus_client (Debian's
python3-prometheus-client, installed by scripts/setup) it exits 2.

    ctxbus metrics | scripts/metrics-parse.py
"""
import json
import math
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("metrics-parse: prometheus_client is missing (apt-get install python3-prometheus-client)", file=sys.stderr)
    sys.exit(2)


def main():
    families, samples = {}, {}
    try:
        for family in text_string_to_metric_families(sys.stdin.read()):
            families[family.name] = family.type
            for sample in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                key = f"{sample.name}{{{labels}}}"
                if key in samples:
                    raise ValueError(f"sample {key} appears twice")
                value = sample.value
                samples[key] = None if math.isnan(value) else ("+Inf" if value == math.inf else value)
    except Exception as error:  # the parser's ValueError, or a duplicate
        print(f"metrics-parse: {error}", file=sys.stderr)
        sys.exit(1)
    json.dump({"families": families, "samples": samples}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
