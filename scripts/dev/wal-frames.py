#!/usr/bin/env python3
"""Counts the WAL frames of each commit in a store's write-ahead log, by the table or index each page belongs to.

    scripts/dev/wal-frames.py DATABASE

Run it while the store is open (storesvc running, or a process with a `SQLiteStore`) and saving: a clean close
checkpoints and empties the WAL. It copies `DATABASE-wal` and then `DATABASE` to a temporary directory and reads
only the copies, never the live files. The WAL goes first: a checkpoint between the two copies only moves pages
that the copied WAL already holds into the database file.

Every page a transaction changes is one frame, written with two `pwrite` calls (its 24-byte header, then the
page), and all of them are flushed by the commit's `fdatasync`; frames per commit is the storage cost of a group
commit (docs/bus.md, "Session 11"). Only the frames since the WAL last restarted are read (the current salt).
Page owners come from SQLite's `dbstat` table, read through the copy, so they are the owners as of the newest
commit; a page freed and reused meanwhile is counted under its new owner.
"""
import collections
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

WAL_HEADER = struct.Struct(">IIIIIIII")
FRAME_HEADER = struct.Struct(">IIII")


def frames(wal):
    """The (page number, is a commit) pairs of the WAL's current frames, in order."""
    if len(wal) < WAL_HEADER.size:
        return []
    _, _, page_size, _, salt1, salt2, _, _ = WAL_HEADER.unpack_from(wal)
    found, offset = [], WAL_HEADER.size
    while offset + 24 + page_size <= len(wal):
        page, database_size, frame_salt1, frame_salt2 = FRAME_HEADER.unpack_from(wal, offset)
        if (frame_salt1, frame_salt2) != (salt1, salt2):
            break
        found.append((page, database_size != 0))
        offset += 24 + page_size
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/dev/wal-frames.py DATABASE")
    database = sys.argv[1]
    with tempfile.TemporaryDirectory() as directory:
        copy = os.path.join(directory, "copy.sqlite")
        shutil.copyfile(database + "-wal", copy + "-wal")
        shutil.copyfile(database, copy)
        with open(copy + "-wal", "rb") as file:
            wal = file.read()
        connection = sqlite3.connect(copy)
        owners = dict((page, name) for name, page in connection.execute("SELECT name, pageno FROM dbstat"))
        connection.close()
    commits, pending = [], []
    for page, is_commit in frames(wal):
        pending.append(page)
        if is_commit:
            commits.append(pending)
            pending = []
    if not commits:
        sys.exit("no committed frames in the WAL (was the store closed, or the WAL just restarted?)")
    per_owner = collections.Counter(owners.get(page, "?") for commit in commits for page in commit)
    sizes = collections.Counter(len(commit) for commit in commits)
    total = sum(len(commit) for commit in commits)
    print(f"{len(commits)} commits, {total} frames: {total / len(commits):.2f} frames per commit")
    print("frames per commit: " + ", ".join(f"{size}×{count}" for size, count in sorted(sizes.items())))
    for owner, count in per_owner.most_common():
        print(f"  {owner:40} {count / len(commits):6.2f} per commit")


if __name__ == "__main__":
    main()
