"""The house rules `make lint` enforces beyond the linters (docs/architecture.md §8): the
daemon's layers (scripts/check_layers.py), section citations that name a document of the
repository (scripts/check_citations.py), and a `make help` that lists every target
(scripts/check_make_help.py). Each is shown to pass on the repository as it is and to fail,
naming the offence, on a tree that breaks it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(_s(text))
    return root


def _s(text: str) -> str:
    return text.replace("SECT", "\u00a7")


def test_the_repository_keeps_its_layers_and_its_citations() -> None:
    for name in ("check_layers", "check_citations", "check_make_help"):
        run = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / f"{name}.py")],
            check=False,
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stdout + run.stderr


def test_imports_across_a_layer_are_named_with_their_rule(tmp_path: Path) -> None:
    layers = _script("check_layers")
    package = (
        _tree(
            tmp_path,
            {
                "postcompact/__init__.py": "",
                "postcompact/core.py": "from postcompact import _core\n",
                "postcompact/paths.py": "import os\n",
                # A handler writing through the store itself, not through a unit of work.
                "postcompact/service/files.py": (
                    "from postcompact.state.registry import Registry\n"
                    "from postcompact.persist import SqliteStore\n"
                ),
                # The pipeline holding the registry, and reaching for the database.
                "postcompact/restore/pipeline.py": (
                    "from postcompact.state import Change\n"
                    "from postcompact.state.registry import X\n"
                ),
                "postcompact/restore/files.py": "from ..persist.store import SqliteStore\n",
                # The state importing its implementation; the model importing the unit of work.
                "postcompact/state/registry.py": "import postcompact.persist.store\n",
                "postcompact/state/model.py": "from postcompact.state.unit import Unit\n",
                "postcompact/persist/store.py": (
                    "from postcompact.state.store import Change\n"
                    "from postcompact.state.unit import U\n"
                ),
                "postcompact/render.py": "from postcompact._core import render\n",
            },
        )
        / "postcompact"
    )
    found = layers.offences(package)
    text = "\n".join(found)
    assert (
        "postcompact/service/files.py:2: postcompact.service.files imports postcompact.persist"
        in text
    )
    assert "pipeline.py:2: postcompact.restore.pipeline imports postcompact.state.registry" in text
    assert (
        "postcompact/restore/files.py:1: postcompact.restore.files imports postcompact.persist"
        in text
    )
    assert "postcompact.state.registry imports postcompact.persist.store" in text
    assert "postcompact.state.model imports postcompact.state.unit" in text
    assert "postcompact.persist.store imports postcompact.state.unit" in text
    assert "postcompact.render imports postcompact._core (the Rust core is used through" in text
    # What is allowed is not reported: the facade's own import, the registry in a service, the
    # Change in the pipeline, the Store protocol in persistence.
    assert not any(f.startswith("postcompact/core.py") for f in found)
    assert "imports postcompact.state.registry (the services" not in text
    assert "pipeline.py:1:" not in text
    assert "persist/store.py:1:" not in text
    where = {f.split(": ", 1)[0] for f in found}
    assert where == {
        "postcompact/service/files.py:2",
        "postcompact/restore/pipeline.py:2",
        "postcompact/restore/files.py:1",
        "postcompact/state/registry.py:1",
        "postcompact/state/model.py:1",
        "postcompact/persist/store.py:2",
        "postcompact/render.py:1",
    }


def test_the_restoration_reserves_no_answer_bytes(tmp_path: Path) -> None:
    """Admission (answer bytes reserved, OVERLOADED) is the services' and the server's: the
    pure computation below them never imports it; they may."""
    layers = _script("check_layers")
    package = (
        _tree(
            tmp_path,
            {
                "postcompact/__init__.py": "",
                "postcompact/admission.py": "from postcompact.errors import ResourceExhausted\n",
                "postcompact/restore/pipeline.py": (
                    "from postcompact.errors import check_answer\n"
                    "from postcompact.admission import reserve_answer\n"
                ),
                "postcompact/restore/files.py": "import postcompact.admission\n",
                "postcompact/state/unit.py": "from postcompact import admission\n",
                "postcompact/render.py": "from postcompact.admission import Admission\n",
                "postcompact/service/files.py": (
                    "from postcompact.admission import reserve_answer\n"
                ),
                "postcompact/transcript/importer.py": (
                    "from postcompact.admission import reserve_answer\n"
                ),
                "postcompact/server.py": "from postcompact.admission import Admission\n",
            },
        )
        / "postcompact"
    )
    found = layers.offences(package)
    text = "\n".join(found)
    assert (
        "postcompact/restore/pipeline.py:2: postcompact.restore.pipeline imports "
        "postcompact.admission (the restoration is pure:" in text
    )
    assert "restore/files.py:1: postcompact.restore.files imports postcompact.admission" in text
    assert {f.split(": ", 1)[0] for f in found} == {
        "postcompact/restore/pipeline.py:2",
        "postcompact/restore/files.py:1",
        "postcompact/state/unit.py:1",
        "postcompact/render.py:1",
    }


def test_a_private_name_imported_from_another_module_is_named(tmp_path: Path) -> None:
    layers = _script("check_layers")
    package = (
        _tree(
            tmp_path,
            {
                "postcompact/__init__.py": "",
                "postcompact/core.py": "from postcompact import _core\n",
                "postcompact/persist/__init__.py": "from postcompact.persist import _helpers\n",
                "postcompact/persist/_helpers.py": "",
                "postcompact/persist/schema.py": "_KEYS = {}\nCOLUMNS = {}\n",
                "postcompact/persist/rows.py": (
                    "from postcompact.persist.schema import _KEYS, COLUMNS\n"
                    "from .schema import _KEYS as keys\n"
                    "from os import _exit\n"
                    "from postcompact.persist.schema import __doc__\n"
                ),
            },
        )
        / "postcompact"
    )
    found = layers.private_imports(package)
    assert found == [
        "postcompact/persist/rows.py:1: postcompact.persist.rows imports "
        "postcompact.persist.schema._KEYS (a private name of another module)",
        "postcompact/persist/rows.py:2: postcompact.persist.rows imports "
        "postcompact.persist.schema._KEYS (a private name of another module)",
    ]


def test_a_citation_of_a_missing_document_or_section_fails(tmp_path: Path) -> None:
    cite = _script("check_citations")
    # The section sign is spelled out here, or this file would cite what it shows failing.
    root = _tree(
        tmp_path,
        {
            "docs/guide.md": "# Guide\n\n## 1. Start\n\n### 1.2 More\n\nSee SECT1 and SECT1.2.\n",
            "daemon/mod.py": (
                '"""See docs/guide.md SECT1.2, SECT1 (fine); DESIGN.md SECT3; '
                'reference SECT6.2."""\n'
                "# docs/guide.md SECT4\n"
                "# --- SECT2 ---\n"
            ),
            "README.md": "Read guide.md SECT1, and docs/claude-code-current.md SECT1.\n",
        },
    )
    assert cite.problems(root / "docs" / "guide.md", root) == []
    assert cite.problems(root / "daemon" / "mod.py", root) == [
        _s(x)
        for x in [
            "daemon/mod.py:1: SECT3 of DESIGN.md, not in the repository",
            "daemon/mod.py:1: SECT6.2 of 'reference': name a file of the repository",
            "daemon/mod.py:2: docs/guide.md has no section 4",
            "daemon/mod.py:3: a bare SECT2 outside Markdown cites nothing",
        ]
    ]
    assert cite.problems(root / "README.md", root) == [
        _s("README.md:1: SECT1 of docs/claude-code-current.md, not in the repository")
    ]


def test_a_target_make_help_leaves_out_is_named(tmp_path: Path) -> None:
    check = _script("check_make_help")
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        ".PHONY: help build \\\n  test\n"
        ".PHONY: clean\n"
        "help:\n"
        '\t@echo "make build   build it"\n'
        '\t@echo "make test X=1  test it"\n'
        "build test clean:\n\t@true\n"
    )
    assert check.missing(makefile) == ["help", "clean"]
    assert check.main([str(makefile)]) == 1
