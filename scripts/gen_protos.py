"""Regenerate the committed gRPC code from proto/ (`make protos`).

Python (daemon and the pure-Python client) is generated with grpcio-tools' bundled protoc and
mypy-protobuf, then the client's typed values (types.py) from that by scripts/gen_py_types.py;
other languages register their generators in GENERATORS as their clients land. The Rust core's
field numbers and enum values (rust_core/src/pbwire/fields.rs), which its hand-written framing
writes answers with, come from the same descriptors (`gen_rust_core`). CI runs this and fails
when the output differs from what is committed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTOS = sorted(p.relative_to(PROTO_ROOT).as_posix() for p in PROTO_ROOT.rglob("*.proto"))
OWN_PROTOS = [p for p in PROTOS if p.startswith("postcompact/")]


def _protoc(args: list[str]) -> None:
    from grpc_tools import protoc  # the bundled libprotoc: no system protoc needed

    include = Path(protoc.__file__).parent / "_proto"
    argv = ["grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{include}", *args]
    if protoc.main(argv) != 0:
        sys.exit(f"protoc failed: {' '.join(argv)}")


def gen_python(package_root: Path) -> None:
    """Write postcompact/v1/*_pb2*.py(i) under package_root (the dir holding `postcompact/`)."""
    out = package_root / "postcompact" / "v1"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    plugin_dir = Path(sys.executable).parent
    _protoc(
        [
            f"--plugin=protoc-gen-mypy={plugin_dir / 'protoc-gen-mypy'}",
            f"--plugin=protoc-gen-mypy_grpc={plugin_dir / 'protoc-gen-mypy_grpc'}",
            f"--python_out={package_root}",
            f"--grpc_python_out={package_root}",
            f"--mypy_out={package_root}",
            f"--mypy_grpc_out={package_root}",
            *OWN_PROTOS,
        ]
    )
    doc = '"""Generated from proto/postcompact/v1 by `make protos`."""\n'
    (out / "__init__.py").write_text(doc)


GO_MODULE = "github.com/postcompact/postcompact/clients/go"
GO_PLUGINS = {  # pinned; installed with `go install` into clients/go/.bin (gitignored)
    "protoc-gen-go": "google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12",
    "protoc-gen-go-grpc": "google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2",
}


def gen_go() -> None:
    """Write clients/go/postcompactv1/*.pb.go with the pinned Go protoc plugins."""
    client = ROOT / "clients" / "go"
    bin_dir = client / ".bin"
    go = shutil.which("go") or "/usr/local/go/bin/go"
    for name, pkg in GO_PLUGINS.items():
        stamp = bin_dir / f".{name}.version"
        if not (bin_dir / name).exists() or not stamp.exists() or stamp.read_text() != pkg:
            subprocess.run(
                [go, "install", pkg],
                cwd=client,
                check=True,
                env={**os.environ, "GOBIN": str(bin_dir)},
            )
            stamp.write_text(pkg)
    out = client / "postcompactv1"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    _protoc(
        [
            f"--plugin=protoc-gen-go={bin_dir / 'protoc-gen-go'}",
            f"--plugin=protoc-gen-go-grpc={bin_dir / 'protoc-gen-go-grpc'}",
            f"--go_out={client}",
            f"--go_opt=module={GO_MODULE}",
            f"--go-grpc_out={client}",
            f"--go-grpc_opt=module={GO_MODULE}",
            *OWN_PROTOS,
        ]
    )


def gen_python_client() -> None:
    """The pure-Python client's copy in clients/python/src, with its imports rewritten, and its
    typed values (scripts/gen_py_types.py)."""
    import tempfile

    dest = ROOT / "clients" / "python" / "src" / "postcompact_client" / "v1"
    with tempfile.TemporaryDirectory() as tmp:
        gen_python(Path(tmp))
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(Path(tmp) / "postcompact" / "v1", dest)
    for f in sorted(dest.iterdir()):
        if f.suffix in (".py", ".pyi"):
            text = f.read_text()
            text = text.replace("from postcompact.v1 import", "from postcompact_client.v1 import")
            f.write_text(text)
    # The typed values (postcompact_client/types.py), from the postcompact_pb2 just written: in
    # a fresh interpreter, which imports that module (and none older).
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_py_types.py")], check=True)


NODE_CLIENT = ROOT / "clients" / "node"
# Must match LOADER_OPTIONS in clients/node/src/proto.ts (the runtime load of the same .proto).
NODE_GEN_FLAGS = [
    "--longs=Number",
    "--enums=String",
    "--defaults",
    "--oneofs",
    "--includeComments",
    "--grpcLib=@grpc/grpc-js",
    "--importFileExtension=.js",
]


def gen_node() -> None:
    """Write the TypeScript types of clients/node/gen/ with @grpc/proto-loader's generator.

    Installs the client's pinned npm dependencies first (`npm ci`) when they are missing. Runs from
    clients/node with a relative include dir so the output does not depend on the checkout path.
    Also writes gen/index.ts: every message as `Name` (decoded output) and `NameInput` (request
    side), every enum as its const object and types.
    """
    tool = NODE_CLIENT / "node_modules" / ".bin" / "proto-loader-gen-types"
    if not tool.exists():
        subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_CLIENT,
            check=True,
        )
    out = NODE_CLIENT / "gen"
    if out.exists():
        shutil.rmtree(out)
    subprocess.run(
        [str(tool), *NODE_GEN_FLAGS, "-I", "../../proto", "-O", "gen", *OWN_PROTOS],
        cwd=NODE_CLIENT,
        check=True,
    )
    lines = ["// Generated by `make protos` (scripts/gen_protos.py): friendly names.", ""]
    for ts in sorted((out / "postcompact" / "v1").glob("*.ts")):
        name, text = ts.stem, ts.read_text()
        module = f"./postcompact/v1/{name}.js"
        if f"export const {name} = {{" in text:
            lines.append(f'export {{ {name} }} from "{module}";')
            lines.append(f'export type {{ {name}__Output }} from "{module}";')
        elif f"export interface {name}__Output" in text:
            names = f"{name}__Output as {name}, {name} as {name}Input"
            lines.append(f'export type {{ {names} }} from "{module}";')
        else:
            lines.append(f'export type * from "{module}";')
    (out / "index.ts").write_text("\n".join(lines) + "\n")


RUST_FIELDS = ROOT / "rust_core" / "src" / "pbwire" / "fields.rs"
# Rust's keywords: a message or enum named one is written as a raw identifier.
_RUST_KEYWORDS = frozenset(
    {
        "as",
        "break",
        "const",
        "continue",
        "crate",
        "else",
        "enum",
        "extern",
        "false",
        "fn",
        "for",
        "if",
        "impl",
        "in",
        "let",
        "loop",
        "match",
        "mod",
        "move",
        "mut",
        "pub",
        "ref",
        "return",
        "self",
        "static",
        "struct",
        "super",
        "trait",
        "true",
        "type",
        "unsafe",
        "use",
        "where",
        "while",
        "async",
        "await",
        "dyn",
        "abstract",
        "become",
        "box",
        "do",
        "final",
        "macro",
        "override",
        "priv",
        "typeof",
        "unsized",
        "virtual",
        "yield",
        "try",
        "gen",
    }
)


def _snake(name: str) -> str:
    out = ""
    for i, c in enumerate(name):
        if c.isupper() and i > 0 and (not name[i - 1].isupper() or name[i + 1 : i + 2].islower()):
            out += "_"
        out += c.lower()
    return f"r#{out}" if out in _RUST_KEYWORDS else out


def _screaming(name: str) -> str:
    return _snake(name).removeprefix("r#").upper()


def _wire_kind(field: Any) -> str:
    """The pbwire type of a field: how it is keyed on the wire."""
    from google.protobuf import descriptor_pb2 as d

    t = d.FieldDescriptorProto
    varint = {t.TYPE_INT32, t.TYPE_INT64, t.TYPE_UINT32, t.TYPE_UINT64, t.TYPE_BOOL, t.TYPE_ENUM}
    fixed32 = {t.TYPE_FIXED32, t.TYPE_SFIXED32, t.TYPE_FLOAT}
    fixed64 = {t.TYPE_FIXED64, t.TYPE_SFIXED64, t.TYPE_DOUBLE}
    repeated = field.label == t.LABEL_REPEATED
    if field.type in (t.TYPE_STRING, t.TYPE_BYTES, t.TYPE_MESSAGE):
        return "Len"
    if repeated:  # a repeated scalar: packed, one length-delimited field (proto3)
        return "Packed"
    if field.type in varint:
        return "Varint"
    if field.type in (t.TYPE_SINT32, t.TYPE_SINT64):
        return "ZigZag"
    if field.type in fixed32:
        return "Fixed32"
    if field.type in fixed64:
        return "Fixed64"
    raise SystemExit(f"gen_rust_core: field {field.name} has an unknown type {field.type}")


def _rust_enum(enum: Any, indent: str, out: list[str]) -> None:
    prefix = _screaming(enum.name) + "_"
    out.append(f"{indent}/// `{enum.name}`'s values.")
    out.append(f"{indent}pub mod {_snake(enum.name)} {{")
    for v in enum.value:
        out.append(f"{indent}    pub const {v.name.removeprefix(prefix)}: i32 = {v.number};")
    out.append(f"{indent}}}")


def _rust_message(msg: Any, indent: str, out: list[str]) -> None:
    if msg.options.map_entry:
        return
    kinds = sorted({_wire_kind(f) for f in msg.field})
    out.append(f"{indent}/// `{msg.name}`'s fields.")
    out.append(f"{indent}pub mod {_snake(msg.name)} {{")
    if kinds:
        out.append(f"{indent}    use crate::pbwire::{{{', '.join(kinds)}}};")
    for f in msg.field:
        kind = _wire_kind(f)
        out.append(f"{indent}    pub const {f.name.upper()}: {kind} = {kind}({f.number});")
    for e in msg.enum_type:
        _rust_enum(e, indent + "    ", out)
    for m in msg.nested_type:
        _rust_message(m, indent + "    ", out)
    out.append(f"{indent}}}")


def gen_rust_core() -> None:
    """Write rust_core/src/pbwire/fields.rs: every message of the own protos as a module of its
    fields' numbers, each typed by how it is keyed on the wire (`pbwire::Varint`, `Len`, ...),
    and every enum as a module of its values (the enum's prefix left out)."""
    import tempfile

    from google.protobuf import descriptor_pb2

    with tempfile.TemporaryDirectory() as tmp:
        out_set = Path(tmp) / "set.pb"
        _protoc([f"--descriptor_set_out={out_set}", *OWN_PROTOS])
        files = descriptor_pb2.FileDescriptorSet.FromString(out_set.read_bytes()).file
    lines = [
        f"//! Generated from {', '.join('proto/' + p for p in OWN_PROTOS)} by `make protos`",
        "//! (scripts/gen_protos.py, `gen_rust_core`); do not edit. Every message as a module",
        "//! of its fields' numbers, typed by how each is keyed on the wire; every enum as a",
        "//! module of its values, the enum's prefix left out.",
        "",
    ]
    body: list[str] = []
    for f in files:
        for e in f.enum_type:
            _rust_enum(e, "", body)
            body.append("")
        for m in f.message_type:
            _rust_message(m, "", body)
            body.append("")
    lines += body[:-1]
    RUST_FIELDS.parent.mkdir(parents=True, exist_ok=True)
    RUST_FIELDS.write_text("\n".join(lines) + "\n")
    subprocess.run(["rustfmt", "--edition", "2021", str(RUST_FIELDS)], check=True)


GENERATORS: dict[str, Callable[[], None]] = {
    "python-daemon": lambda: gen_python(ROOT / "daemon"),
    "python-client": gen_python_client,
    "go": gen_go,
    "node": gen_node,
    "rust-core": gen_rust_core,
}


def main() -> None:
    wanted = sys.argv[1:] or list(GENERATORS)
    for name in wanted:
        print(f"protos: {name}", flush=True)
        GENERATORS[name]()


if __name__ == "__main__":
    main()
