#!/usr/bin/env python3
"""Writes the files of commit REV of a bare git repository into DEST, like `git archive REV | tar -x`,
but leaves out (and lists on stderr) the files whose blobs the repository lacks: mirrors may keep
large files elsewhere. Used by bench/executorch/build.sh --mirrors.
  extract_tree.py GIT_DIR REV DEST
"""
import os
import subprocess
import sys

git_dir, rev, dest = sys.argv[1:4]
listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", rev], check=True,
                         capture_output=True).stdout.split(b"\0")
entries = []
for item in listing:
    if not item:
        continue
    meta, path = item.split(b"\t", 1)
    mode, kind, sha = meta.split()
    if kind == b"blob":
        entries.append((mode, sha, path.decode("utf-8", "surrogateescape")))
cat = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
missing = []
for mode, sha, path in entries:
    cat.stdin.write(sha + b"\n")
    cat.stdin.flush()
    header = cat.stdout.readline().split()
    if len(header) < 3 or header[1] == b"missing":
        missing.append(path)
        continue
    data = cat.stdout.read(int(header[2]))
    cat.stdout.read(1)  # the newline after the object
    target = os.path.join(dest, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if mode == b"120000":
        if os.path.lexists(target):
            os.remove(target)
        os.symlink(data.decode(), target)
        continue
    with open(target, "wb") as f:
        f.write(data)
    if mode == b"100755":
        os.chmod(target, 0o755)
cat.stdin.close()
cat.wait()
if missing:
    print(f"{git_dir}: left out {len(missing)} file(s) whose blobs it lacks, e.g. {missing[0]}", file=sys.stderr)
