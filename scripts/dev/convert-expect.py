#!/usr/bin/env python3
"""Rewrites `#expect(condition[, comment])` calls in Swift test files as TestSupport's expectation functions.

Used once (session 9) and kept for files written with `#expect` later: `scripts/dev/convert-expect.py FILE...`.
Each `#expect` macro expansion costs the compiler about a tenth of a second; a function call almost nothing
(docs/testing.md, "Compile time of the tests"). The rewrite picks the function by the condition's top-level
operator, so that a failure still shows the values:

    a == nil -> expectNil(a)        a != nil -> expectNotNil(a)      a == b -> expectEqual(a, b)
    a != b   -> expectNotEqual(a, b) a < b  -> expectLessThan(a, b)  (also <=, >, >=)
    x.isEmpty -> expectEmpty(x)     !x     -> expectFalse(x)         anything else -> expectTrue(condition)

It leaves alone calls with a labelled first argument (`#expect(throws:)`, `#expect(processExitsWith:)`), conditions that contain `await` (an async condition
needs the macro), and calls with arguments other than a condition and a comment.
"""
import re
import sys

COMPARISONS = {"==": "expectEqual", "!=": "expectNotEqual", "<": "expectLessThan", "<=": "expectLessThanOrEqual",
               ">": "expectGreaterThan", ">=": "expectGreaterThanOrEqual"}


def skip_string(text, i):
    """Returns the index after the string literal starting at text[i] (which is '#' or '"')."""
    hashes = 0
    while text[i] == "#":
        hashes += 1
        i += 1
    assert text[i] == '"', text[i:i + 20]
    multiline = text.startswith('"""', i)
    i += 3 if multiline else 1
    close = ('"""' if multiline else '"') + "#" * hashes
    escape = "\\" + "#" * hashes
    while True:
        if text.startswith(escape, i):
            j = i + len(escape)
            if text[j] == "(":
                i = skip_balanced(text, j)
            else:
                i = j + 1
            continue
        if text.startswith(close, i):
            return i + len(close)
        i += 1


def skip_balanced(text, i):
    """text[i] is an opening bracket; returns the index after its match."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[text[i]]]
    i += 1
    while stack:
        c = text[i]
        if c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            i = skip_string(text, i)
            continue
        if text.startswith("//", i):
            i = text.index("\n", i)
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            assert c == stack[-1], (text[max(0, i - 80):i + 20], c, stack)
            stack.pop()
        i += 1
    return i


def top_level_ranges(text):
    """The (start, end) ranges of text outside brackets and strings."""
    ranges, i, start = [], 0, 0
    while i < len(text):
        c = text[i]
        if c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            ranges.append((start, i))
            i = skip_string(text, i)
            start = i
        elif c in "([{":
            ranges.append((start, i))
            i = skip_balanced(text, i)
            start = i
        else:
            i += 1
    ranges.append((start, len(text)))
    return ranges


def split_arguments(text):
    """Splits a call's argument text at top-level commas."""
    cuts = []
    for start, end in top_level_ranges(text):
        for m in re.finditer(",", text[start:end]):
            cuts.append(start + m.start())
    parts, last = [], 0
    for cut in cuts:
        parts.append(text[last:cut])
        last = cut + 1
    parts.append(text[last:])
    return parts


def operators(text):
    """The top-level binary operators (surrounded by whitespace) and keywords of text, with their positions."""
    found = []
    for start, end in top_level_ranges(text):
        segment = text[start:end]
        for m in re.finditer(r"(?<=\s)([=!<>&|?.~+\-*/%^]+|is|as[?!]?)(?=\s)", segment):
            found.append((m.group(1), start + m.start(1), start + m.end(1)))
    return found


def rewrite(condition, comment):
    """The function call replacing `#expect(condition[, comment])`, or None to leave it."""
    if re.search(r"\bawait\b", condition):
        return None
    stripped = condition.strip()
    tail = ("," + comment) if comment is not None else ""
    ops = operators(stripped)
    names = [op for op, _, _ in ops]
    if len(ops) == 1 and names[0] in COMPARISONS:
        op, begin, end = ops[0]
        lhs, rhs = stripped[:begin].rstrip(), stripped[end:].lstrip()
        if op == "==" and rhs == "nil":
            return f"expectNil({lhs}{tail})"
        if op == "!=" and rhs == "nil":
            return f"expectNotNil({lhs}{tail})"
        if "nil" in (lhs, rhs):
            return None
        return f"{COMPARISONS[op]}({lhs}, {rhs}{tail})"
    if not ops:
        if stripped.startswith("!") and not stripped.startswith("!="):
            return f"expectFalse({stripped[1:]}{tail})"
        m = re.fullmatch(r"(.+)\.isEmpty", stripped, re.S)
        if m and not stripped.startswith(("try ", "try?")):
            return f"expectEmpty({m.group(1)}{tail})"
    return f"expectTrue({stripped}{tail})"


def convert(source):
    out, i, changed, left = [], 0, 0, 0
    while True:
        j = source.find("#expect(", i)
        if j < 0:
            out.append(source[i:])
            break
        out.append(source[i:j])
        line_start = source.rfind("\n", 0, j) + 1
        if "//" in source[line_start:j]:  # in a comment
            out.append("#expect(")
            i = j + len("#expect(")
            continue
        open_paren = j + len("#expect")
        end = skip_balanced(source, open_paren)
        inner = source[open_paren + 1:end - 1]
        args = split_arguments(inner)
        replacement = None
        if not re.match(r"\s*\w+\s*:", inner) and len(args) <= 2:
            if len(args) == 1 or not re.match(r"\s*\w+\s*:", args[1]):
                comment = args[1] if len(args) == 2 else None
                replacement = rewrite(args[0], comment)
        if replacement is None:
            out.append(source[j:end])
            left += 1
        else:
            out.append(replacement)
            changed += 1
        i = end
    return "".join(out), changed, left


def main():
    total_changed = total_left = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            source = f.read()
        converted, changed, left = convert(source)
        if changed and "import TestSupport" not in converted:
            converted = re.sub(r"^(import Testing\n)", r"\1import TestSupport\n", converted, count=1, flags=re.M)
            if "import TestSupport" not in converted:
                converted = "import TestSupport\n" + converted
        if converted != source:
            with open(path, "w") as f:
                f.write(converted)
        total_changed += changed
        total_left += left
    print(f"converted {total_changed}, left {total_left}")


if __name__ == "__main__":
    main()
