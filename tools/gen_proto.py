#!/usr/bin/env python3
"""Regenerate workbench/pb/ from proto/workbench/v1/*.proto (with --pyi_out type stubs).

`--check` regenerates into a temporary folder and fails when the committed code differs.
"""

from __future__ import annotations

import filecmp
import re
import sys
import tempfile
from pathlib import Path

try:
    from grpc_tools import protoc
except ImportError:  # the check must say why it cannot run, not end in a traceback
    sys.exit(
        "tools/gen_proto.py needs grpcio-tools (pinned in the test extra): "
        "run it with the project's venv, `.venv/bin/pip install -e '.[test]'` first"
    )

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto" / "workbench" / "v1"
OUT_DIR = ROOT / "workbench" / "pb"


def generate(out: Path) -> None:
    protos = sorted(str(p) for p in PROTO_DIR.glob("*.proto"))
    include = str(Path(protoc.__file__).parent / "_proto")
    args = ["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}", *protos]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    # protoc writes an import of another of our files as a top-level module (`import
    # workbench_pb2`); in the package it is `workbench.pb.workbench_pb2`
    for generated in out.glob("*_pb2.py*"):
        text = generated.read_text()
        fixed = re.sub(r"^import (\w+_pb2) as ", r"from workbench.pb import \1 as ", text, flags=re.MULTILINE)
        if fixed != text:
            generated.write_text(fixed)


def main() -> int:
    if "--check" in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp))
            fresh = sorted(p.name for p in Path(tmp).iterdir())
            stale = [
                n
                for n in fresh
                if not (OUT_DIR / n).exists() or not filecmp.cmp(Path(tmp) / n, OUT_DIR / n, shallow=False)
            ]
        if stale:
            print(f"generated code is stale: {', '.join(stale)}; run tools/gen_proto.py", file=sys.stderr)
            return 1
        print("generated code is fresh")
        return 0
    generate(OUT_DIR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
