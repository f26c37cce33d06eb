"""Copy the quality benchmark's knowledge bases out of fetched repository snapshots.

    python bench/quality/extract_kbs.py [--mirror /work/.mirror] [--out ~/golden-kbs]
                                        [--split dev|test] [KB ...]

Reads bench/quality/kbs.toml (all KBs, those named, or one set with --split); for every source,
lists the files of the recorded commit in the snapshot (`git ls-tree`), keeps those matching its
`paths` globs and writes them under OUT/<kb>/<into>/ keeping their relative layout below the
glob's fixed prefix. Files are written as bytes, so PDFs come out as they are in the snapshot.
Third-party text stays outside the repository; this script is the recipe, not the copy.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def snapshot(mirror: Path, repo: str) -> Path:
    for candidate in (mirror / repo.replace("/", "+") / "repo", mirror / repo.replace("/", "+"),
                      mirror / repo.split("/")[1]):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    sys.exit(f"extract_kbs: no snapshot of {repo} under {mirror} (fetch it first)")


def git(repo_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(repo_dir if (repo_dir / "HEAD").exists()
                                                   else repo_dir / ".git"), *args],
                          check=True, capture_output=True).stdout


def fixed_prefix(pattern: str) -> str:
    """The folder part of a glob before its first wildcard ("docs/advanced/*.md" -> "docs/")."""
    head = pattern.split("*", 1)[0]
    return head[: head.rfind("/") + 1]


def extract(name: str, kb: dict, mirror: Path, out: Path) -> int:
    written = 0
    origin: dict[Path, str] = {}  # target -> source path, to warn when one overwrites another
    for source in kb["source"]:
        repo_dir = snapshot(mirror, source["repo"])
        files = git(repo_dir, "ls-tree", "-r", "--name-only", "-z", source["commit"]).split(b"\0")
        for raw in files:
            path = raw.decode("utf-8")
            for pattern in source["paths"]:
                if fnmatch.fnmatch(path, pattern):
                    rel = path[len(fixed_prefix(pattern)):]
                    target = out / name / source.get("into", "") / rel
                    if target in origin:
                        print(f"extract_kbs: warning: {name}: {path} overwrites {origin[target]} "
                              f"(both -> {target.relative_to(out)})", file=sys.stderr)
                    origin[target] = path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(git(repo_dir, "show", f"{source['commit']}:{path}"))
                    written += 1
                    break
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kbs", nargs="*", help="KB names from kbs.toml (default: all)")
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=Path.home() / "golden-kbs")
    ap.add_argument("--split", choices=("dev", "test"),
                    help="only the KBs of this set (dev: may be tuned on; test: only reported)")
    args = ap.parse_args()
    config = tomllib.loads((HERE / "kbs.toml").read_text(encoding="utf-8"))
    for name in args.kbs:
        if name not in config:
            sys.exit(f"extract_kbs: unknown KB {name!r}; known: {', '.join(config)}")
    names = [n for n in args.kbs or list(config)
             if args.split is None or config[n].get("split") == args.split]
    for name in names:
        n = extract(name, config[name], args.mirror, args.out)
        print(f"{name}: {n} files -> {args.out / name}")


if __name__ == "__main__":
    main()
